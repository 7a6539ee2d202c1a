import {
  type ClientRequest,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import type { HttpBinding } from '../../contract/syscall.ts';
import { CliError } from './errors.ts';
import type { Endpoint } from './globals.ts';

/**
 * The REST contract, client side: path params from input fields of the same name; the rest
 * in the query string (GET, DELETE) or a JSON body (POST); errors as `{ error: { code, message } }`.
 * It speaks node:http rather than fetch: loading fetch (undici) costs a CLI call ~40 ms.
 */

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** What the client needs of a syscall. */
export interface Callable {
  name: string;
  http?: HttpBinding;
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
  syscall: Callable,
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
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`invalid server URL "${endpoint.url}": not http(s)`);
  }
  const headers: Record<string, string> = {
    authorization: `Bearer ${endpoint.key}`,
    accept: 'application/json',
  };
  if (endpoint.zone) headers['x-warren-zone'] = endpoint.zone;
  if (method === 'POST' || method === 'PATCH') {
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
  syscall: Callable,
  input: Record<string, unknown>,
  endpoint: Endpoint,
): Promise<unknown> {
  const req = buildRequest(syscall, input, endpoint);
  let res: { status: number; statusText: string; text: string };
  try {
    res = await send(req);
  } catch (error) {
    throw new UnreachableError(endpoint.url, networkReason(error));
  }
  const body = parseJson(res.text);
  if (res.status >= 200 && res.status < 300) return body;
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
  throw new ApiError(res.status, `http_${res.status}`, res.text.trim().slice(0, 500) || res.statusText);
}

/**
 * One request, the whole body as text; no keep-alive, so nothing holds the process open.
 * https (and its TLS stack) loads only when asked for.
 */
async function send(req: HttpRequest): Promise<{ status: number; statusText: string; text: string }> {
  const url = new URL(req.url);
  const request: (url: URL, opts: RequestOptions, cb: (res: IncomingMessage) => void) => ClientRequest =
    url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise((resolve, reject) => {
    const r = request(url, { method: req.method, headers: req.headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text }),
      );
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

const parseJson = (text: string): unknown => {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** A socket error's code (ECONNREFUSED) says more than its message. */
function networkReason(error: unknown): string | undefined {
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string') return e.code;
  return typeof e.message === 'string' ? e.message : undefined;
}
