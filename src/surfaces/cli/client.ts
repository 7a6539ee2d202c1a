import type { Syscall } from '../../syscalls/types.ts';
import { CliError } from './errors.ts';
import type { Endpoint } from './globals.ts';

/**
 * The REST contract, client side: path params from input fields of the same name; the rest
 * in the query string (GET, DELETE) or a JSON body (POST); errors as `{ error: { code, message } }`.
 */

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** The server answered with an error. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Nothing answered at the URL. */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly reason?: string,
  ) {
    super(`cannot reach warren at ${url} — is \`warren serve\` running?${reason ? ` (${reason})` : ''}`);
    this.name = 'UnreachableError';
  }
}

export function buildRequest(
  syscall: Syscall,
  input: Record<string, unknown>,
  endpoint: Endpoint,
): HttpRequest {
  if (!syscall.http) throw new CliError(`${syscall.name} has no HTTP route, so the CLI cannot call it`);
  const { method, path } = syscall.http;
  const rest: Record<string, unknown> = { ...input };
  const filled = path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const value = rest[name];
    if (value === undefined) throw new CliError(`${syscall.name}: no value for the path parameter :${name}`);
    delete rest[name];
    return encodeURIComponent(String(value));
  });
  let url: URL;
  try {
    url = new URL(endpoint.url.replace(/\/+$/, '') + filled);
  } catch {
    throw new CliError(`invalid server URL "${endpoint.url}"`);
  }
  const headers: Record<string, string> = {
    authorization: `Bearer ${endpoint.key}`,
    accept: 'application/json',
  };
  if (endpoint.zone) headers['x-warren-zone'] = endpoint.zone;
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    return { method, url: url.toString(), headers, body: JSON.stringify(dropUndefined(rest)) };
  }
  for (const [name, value] of Object.entries(dropUndefined(rest))) {
    url.searchParams.set(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return { method, url: url.toString(), headers };
}

const dropUndefined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** Calls one syscall over REST; resolves to its output, throws ApiError or UnreachableError. */
export async function callSyscall(
  syscall: Syscall,
  input: Record<string, unknown>,
  endpoint: Endpoint,
): Promise<unknown> {
  const req = buildRequest(syscall, input, endpoint);
  let res: Response;
  try {
    res = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      ...(req.body ? { body: req.body } : {}),
    });
  } catch (error) {
    throw new UnreachableError(endpoint.url, networkReason(error));
  }
  const text = await res.text();
  const body = parseJson(text);
  if (res.ok) return body;
  const err = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)
    ?.error;
  if (err && typeof err.code === 'string') {
    const details = typeof err.details === 'object' && err.details !== null ? err.details : undefined;
    throw new ApiError(
      res.status,
      err.code,
      String(err.message ?? ''),
      details as Record<string, unknown> | undefined,
    );
  }
  throw new ApiError(res.status, `http_${res.status}`, text.trim().slice(0, 500) || res.statusText);
}

const parseJson = (text: string): unknown => {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** undici reports `fetch failed` with the socket error as its cause. */
function networkReason(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : undefined;
}
