import type { Session } from './types.ts';

/** The server's typed error, as its `{ error: { code, message, requestId } }` body says it. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** Calls the REST API as the logged-in browser (the HttpOnly cookie rides along by itself). */
export async function api<T>(method: string, path: string, body?: unknown, zone?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (zone) headers['x-warren-zone'] = zone;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (error) {
    throw new ApiError('unreachable', `cannot reach warren: ${(error as Error).message}`, 0);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string; requestId?: string } } | null)?.error;
    throw new ApiError(e?.code ?? 'http_error', e?.message ?? `HTTP ${res.status}`, res.status, e?.requestId);
  }
  return json as T;
}

export const qs = (params: Record<string, string | number | boolean | undefined | null>): string => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
};

/** Reads every page of a paged list (`next` cursor), up to a bound, so big lists stay bounded. */
export async function allPages<T>(
  path: string,
  key: string,
  params: Record<string, string | number | boolean | undefined> = {},
  maxPages = 10,
): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await api<Record<string, unknown>>('GET', path + qs({ ...params, limit: 1000, after }));
    out.push(...((page[key] as T[]) ?? []));
    const next = page.next as string | null | undefined;
    if (!next) break;
    after = next;
  }
  return out;
}

/** One session, read alone (in its zone). */
export const readSession = async (id: string, zone?: string): Promise<Session> =>
  (await api<{ session: Session }>('GET', `/v1/sessions/${encodeURIComponent(id)}`, undefined, zone)).session;
