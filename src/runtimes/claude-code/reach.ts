import { connect } from 'node:net';

/**
 * Why the model API cannot be reached. When a call gets no HTTP answer at all, Claude Code
 * says only `"error":"unknown"` (stream-json) or "Connection error." (its debug log), never the
 * cause; warren finds it by connecting to the same endpoint itself: "ECONNREFUSED
 * 127.0.0.1:4000", "ENOTFOUND api.example", "no answer in 3 s from …". Only a TCP connect, from
 * warren's host: it sends nothing, so no key or prompt leaves warren.
 */

/** Where the CLI sends its model calls: its `ANTHROPIC_BASE_URL`, else Anthropic's API. */
export function modelApiBase(env: Record<string, string | undefined>): string {
  return env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com';
}

const PROBE_MS = 3000;

/** The connect error to `base`'s host and port, or null when a connection is made. */
export function unreachableCause(base: string, timeoutMs = PROBE_MS): Promise<string | null> {
  let host: string;
  let port: number;
  try {
    const u = new URL(base);
    host = u.hostname.replace(/^\[(.*)\]$/, '$1');
    port = Number(u.port) || (u.protocol === 'http:' ? 80 : 443);
  } catch {
    return Promise.resolve(`not a URL: ${base}`);
  }
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (cause: string | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(cause);
    };
    const timer = setTimeout(
      () => done(`no answer in ${timeoutMs / 1000} s from ${host}:${port}`),
      timeoutMs,
    );
    socket.once('connect', () => done(null));
    socket.once('error', (error: NodeJS.ErrnoException & { address?: string; port?: number }) => {
      const code = error.code ?? error.message;
      // The address it tried (localhost resolved: ECONNREFUSED 127.0.0.1:4000), or the name it
      // could not resolve (ENOTFOUND api.example).
      done(error.address ? `${code} ${error.address}:${error.port ?? port}` : `${code} ${host}`);
    });
  });
}
