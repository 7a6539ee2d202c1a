/** The browser's session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site sends it). */
export const SESSION_COOKIE = 'warren_session';

/** One cookie's value from a Cookie header, or undefined. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
