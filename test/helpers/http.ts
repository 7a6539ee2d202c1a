/**
 * A real warren behind a real HTTP server on 127.0.0.1:<random port>, on any backend:
 * the Warren a `forEachWarren` target opens, with an operator key (as `serve` makes one on
 * first start) and the Fastify server from `buildHttpServer`. Closing the warren (the
 * target does it after each test) closes the HTTP server first and ends any live-event
 * client the helper opened.
 *
 * Also a tiny SSE client for the live event stream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureOperatorKey } from '../../src/kernel/operator-keys.ts';
import { buildHttpServer, type HttpOptions } from '../../src/surfaces/http/server.ts';
import type { Warren, WarrenOptions } from '../../src/syscalls/warren.ts';
import { WAIT_MS, type WarrenTarget } from './warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the tests that read them
type Any = any;

export interface ApiOptions {
  /** The bearer credential: the operator key by default; `null` sends no Authorization header. */
  auth?: string | null;
  headers?: Record<string, string>;
  /** Send this text as the body (with content-type: application/json) instead of JSON.stringify(body). */
  raw?: string;
}

export interface ApiResponse<T = Any> {
  status: number;
  json: T;
}

export interface HttpWarren {
  warren: Warren;
  url: string;
  key: string;
  dataDir: string;
  api<T = Any>(method: string, path: string, body?: unknown, opts?: ApiOptions): Promise<ApiResponse<T>>;
  /** A session's scoped token (the same one its agent gets, for token generation `gen`). */
  tokenOf(sessionId: string, gen?: number): string;
  /** The log's head seq: how many events have committed. */
  head(): Promise<number>;
  /** Open the live event stream; closed with the warren if the test does not. */
  live(query?: Record<string, string | number>, opts?: { lastEventId?: number; auth?: string }): SseClient;
}

export async function startHttp(
  target: WarrenTarget,
  opts: Omit<WarrenOptions, 'db' | 'schema'> & { http?: HttpOptions } = {},
): Promise<HttpWarren> {
  const { http, ...warrenOpts } = opts;
  const w = await target.open(warrenOpts);
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-http-'));
  const { key } = await ensureOperatorKey(w.store, w.kernel.ids, dataDir);
  if (!key) throw new Error('a fresh warren should have created an operator key');
  const app = await buildHttpServer(w, http);
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  w.kernel.config.publicUrl = address;
  w.kernel.config.gatewayUrl = address;
  const clients = new Set<SseClient>();

  const closeWarren = w.close.bind(w);
  let closing: Promise<void> | undefined;
  w.close = () => {
    closing ??= (async () => {
      for (const c of clients) c.close();
      try {
        await withTimeout(app.close(), 15_000, 'closing the HTTP server');
      } finally {
        await closeWarren();
        rmSync(dataDir, { recursive: true, force: true });
      }
    })();
    return closing;
  };

  return {
    warren: w,
    url: address,
    key,
    dataDir,
    api: (method, path, body, o = {}) => request(address, method, path, body, { auth: key, ...o }),
    tokenOf: (id, gen = 0) => w.tokens.mint(id, gen),
    head: () => w.store.log.head(),
    live(query = {}, o = {}) {
      const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
      const client = openSse(`${address}/v1/events/live${qs ? `?${qs}` : ''}`, {
        auth: o.auth ?? key,
        ...(o.lastEventId !== undefined ? { lastEventId: o.lastEventId } : {}),
      });
      clients.add(client);
      return client;
    },
  };
}

/** One HTTP request; the JSON body (or null when there is none). */
export async function request<T = Any>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  opts: ApiOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth) headers.authorization = `Bearer ${opts.auth}`;
  let payload: string | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (body !== undefined) payload = JSON.stringify(body);
  if (payload !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: unknown = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: ${res.status} with a body that is not JSON: ${text.slice(0, 300)}`);
    }
  }
  return { status: res.status, json: json as T };
}

// ---------------------------------------------------------------- SSE

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  /** `data` parsed as JSON (every warren event is JSON). */
  json: Any;
}

export interface SseClient {
  /** Resolves with the response status and headers once they arrive. */
  readonly opened: Promise<{ status: number; contentType: string | null }>;
  readonly events: SseEvent[];
  /** Comment lines (`: …`), e.g. the greeting and heartbeats. */
  readonly comments: string[];
  /** The `retry:` value, if the server sent one. */
  readonly retry: number | undefined;
  readonly ended: boolean;
  /** Wait until `n` events have arrived (all of them, not only new ones). */
  waitForCount(n: number, ms?: number): Promise<SseEvent[]>;
  waitFor(pred: (e: SseEvent) => boolean, ms?: number): Promise<SseEvent>;
  waitForComment(pred: (c: string) => boolean, ms?: number): Promise<string>;
  close(): void;
}

/**
 * A minimal EventSource: fields `id`, `event`, `data` (multi-line joined with \n), `retry`,
 * comments; a blank line dispatches. Lines end in \n, \r\n or \r.
 */
export function openSse(
  url: string,
  opts: { auth?: string; lastEventId?: number; headers?: Record<string, string> } = {},
): SseClient {
  const ac = new AbortController();
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let retry: number | undefined;
  let ended = false;
  let error: unknown;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of [...listeners]) l();
  };

  const headers: Record<string, string> = { accept: 'text/event-stream', ...opts.headers };
  if (opts.auth) headers.authorization = `Bearer ${opts.auth}`;
  if (opts.lastEventId !== undefined) headers['last-event-id'] = String(opts.lastEventId);

  let resolveOpened!: (v: { status: number; contentType: string | null }) => void;
  let rejectOpened!: (e: unknown) => void;
  const opened = new Promise<{ status: number; contentType: string | null }>((res, rej) => {
    resolveOpened = res;
    rejectOpened = rej;
  });
  opened.catch(() => {});

  const parser = new SseParser(
    (e) => {
      events.push(e);
      notify();
    },
    (c) => {
      comments.push(c);
      notify();
    },
    (r) => {
      retry = r;
    },
  );

  void (async () => {
    try {
      const res = await fetch(url, { headers, signal: ac.signal });
      resolveOpened({ status: res.status, contentType: res.headers.get('content-type') });
      if (!res.body) return;
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        parser.push(decoder.decode(chunk, { stream: true }));
      }
      parser.push(decoder.decode());
    } catch (e) {
      if (!ac.signal.aborted) error = e;
      rejectOpened(e);
    } finally {
      ended = true;
      notify();
    }
  })();

  const wait = <T>(check: () => T | undefined, ms: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const done = (fn: () => void) => {
        clearTimeout(timer);
        listeners.delete(listener);
        fn();
      };
      const listener = () => {
        const v = check();
        if (v !== undefined) return done(() => resolve(v));
        if (ended)
          done(() =>
            reject(
              new Error(
                `the live stream ended while waiting for ${what}${error ? `: ${(error as Error).message}` : ''}`,
              ),
            ),
          );
      };
      const timer = setTimeout(
        () =>
          done(() =>
            reject(new Error(`timed out after ${ms} ms waiting for ${what}; got ${events.length} events`)),
          ),
        ms,
      );
      listeners.add(listener);
      listener();
    });

  return {
    opened,
    events,
    comments,
    get retry() {
      return retry;
    },
    get ended() {
      return ended;
    },
    waitForCount: (n, ms = WAIT_MS) =>
      wait(() => (events.length >= n ? events.slice() : undefined), ms, `${n} events`),
    waitFor: (pred, ms = WAIT_MS) => wait(() => events.find(pred), ms, 'a matching event'),
    waitForComment: (pred, ms = WAIT_MS) => wait(() => comments.find(pred), ms, 'a matching comment'),
    close: () => ac.abort(),
  };
}

/** The SSE wire format, incrementally. Exported so it can be tested on its own. */
export class SseParser {
  private buf = '';
  private id: string | undefined;
  private event: string | undefined;
  private data: string[] = [];
  private lastWasCr = false;

  constructor(
    private readonly onEvent: (e: SseEvent) => void,
    private readonly onComment: (c: string) => void = () => {},
    private readonly onRetry: (ms: number) => void = () => {},
  ) {}

  push(text: string): void {
    for (const ch of text) {
      if (ch === '\n' && this.lastWasCr) {
        this.lastWasCr = false;
        continue;
      }
      this.lastWasCr = ch === '\r';
      if (ch === '\n' || ch === '\r') {
        this.line(this.buf);
        this.buf = '';
      } else this.buf += ch;
    }
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) {
      this.onComment(line.slice(1).trimStart());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'id') this.id = value;
    else if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) this.onRetry(Number(value));
  }

  private dispatch(): void {
    if (this.data.length === 0) {
      this.event = undefined;
      return;
    }
    const data = this.data.join('\n');
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      json = undefined;
    }
    this.onEvent({
      ...(this.id !== undefined ? { id: this.id } : {}),
      ...(this.event !== undefined ? { event: this.event } : {}),
      data,
      json,
    });
    this.data = [];
    this.event = undefined;
  }
}

export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
