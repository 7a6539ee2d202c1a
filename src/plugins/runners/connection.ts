import type { WebSocket } from 'ws';
import type { AgentExit } from '../../runtimes/types.ts';
import type { Log } from '../../util/log.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Usage } from '../../vocab/usage.ts';
import { InFlight } from './in-flight.ts';
import type { RemoteAgent } from './remote-agent.ts';
import { type ErrorBody, EXPIRED, expired, type RunnerFrame, type ServerFrame } from './wire.ts';

type Request = ServerFrame extends infer F ? (F extends { id: number } ? Omit<F, 'id'> : never) : never;

/** What a runner said about itself when it connected. */
export interface RunnerInfo {
  name: string;
  runtimes: string[];
  cwdRoot: string | null;
  hostname: string;
  pid: number;
}

/** The sink methods a runner may report, and how each is applied (spawned/exited: see decisions). */
const SINK_METHODS = new Set([
  'output',
  'event',
  'usage',
  'busy',
  'idle',
  'ready',
  'saveState',
  'activity',
  'exit',
]);

/**
 * One connected runner process, as this server sees it: its agents, the requests in flight
 * both ways, and the HTTP tunnel its agents reach warren through.
 */
export class RunnerConnection {
  readonly agents = new Map<string, RemoteAgent>();
  // A runner's own failure codes it may not share with this server read as the runtime's.
  private readonly inFlight = new InFlight('runtime_failed');
  private readonly tunnels = new Map<number, AbortController>();
  private nextId = 1;
  open = true;
  /** When a frame of this runner last arrived (the heartbeat's clock). */
  heardAt: number;

  constructor(
    readonly id: string,
    readonly info: RunnerInfo,
    readonly connectedAt: number,
    private readonly ws: WebSocket,
    /** Where the tunnel sends agents' HTTP requests: this server's own URL. */
    private readonly serverUrl: () => string | null,
    private readonly log: Log,
    /** It answers heartbeats (heartbeat.ts); older runners are never timed out. */
    readonly beats = false,
  ) {
    this.heardAt = connectedAt;
  }

  send(frame: ServerFrame): void {
    if (this.open) this.ws.send(JSON.stringify(frame));
  }

  /** A request the runner answers with a `result`; rejected when the wire breaks or after `ms`. */
  request(frame: Request, ms: number): Promise<unknown> {
    if (!this.open) return Promise.reject(offline(this.info.name));
    const id = this.nextId++;
    return this.inFlight.start(
      id,
      ms,
      () => new WarrenError('unavailable', `runner ${this.info.name} did not answer in ${ms} ms`),
      () => this.send({ ...frame, id, deadline: Date.now() + ms } as ServerFrame),
    );
  }

  forget(sessionId: string, agent: RemoteAgent): void {
    if (this.agents.get(sessionId) === agent) this.agents.delete(sessionId);
  }

  /** The wire is gone: requests fail, tunnels end, every agent's session is suspended. */
  closed(why: string): void {
    if (!this.open) return;
    this.open = false;
    this.inFlight.failAll(() => offline(this.info.name));
    for (const ac of this.tunnels.values()) ac.abort();
    this.tunnels.clear();
    for (const agent of [...this.agents.values()]) agent.lost(why);
    this.agents.clear();
  }

  close(code: number, reason: string): void {
    try {
      this.ws.close(code, reason);
    } catch {}
    this.closed(reason);
  }

  /** The runner stopped answering: drop the socket without a closing handshake it cannot answer. */
  terminate(reason: string): void {
    this.closed(reason);
    this.ws.terminate();
  }

  async onFrame(f: RunnerFrame): Promise<void> {
    switch (f.t) {
      case 'result':
        return this.inFlight.settle(f);
      case 'sink':
        return this.sink(f);
      case 'call':
        return this.call(f);
      case 'http':
        return this.tunnel(f);
      case 'http-abort':
        this.tunnels.get(f.id)?.abort();
        return;
      case 'beat':
        return; // heard (the hub notes every frame's arrival)
      default:
        return;
    }
  }

  private async sink(f: Extract<RunnerFrame, { t: 'sink' }>): Promise<void> {
    const agent = this.agents.get(f.session);
    const answer = (error?: unknown) => {
      if (f.id === undefined) return;
      this.send(
        error === undefined
          ? { t: 'result', id: f.id, ok: true }
          : { t: 'result', id: f.id, ok: false, error: errorBody(error) },
      );
    };
    if (!agent || !SINK_METHODS.has(f.method) || !Array.isArray(f.args)) return answer(notYours(f.session));
    if (expired(f)) return answer(expiredError());
    if (!agent.reported(f.method, f.acks, f.took)) return answer();
    const s = agent.sink;
    const [a, b] = f.args as [unknown, unknown];
    try {
      switch (f.method) {
        case 'output':
          await s.output(String(a));
          break;
        case 'event':
          await s.event(String(a), isObject(b) ? b : {});
          break;
        case 'usage':
          await s.usage((isObject(a) ? a : {}) as Usage);
          break;
        case 'busy':
          await s.busy();
          break;
        case 'idle':
          await s.idle();
          break;
        case 'ready':
          s.ready();
          break;
        case 'saveState':
          await s.saveState(isObject(a) ? a : {});
          break;
        case 'activity':
          await s.activity(typeof a === 'string' ? a.slice(0, 200) : null);
          break;
        case 'exit': {
          const r = (isObject(a) ? a : {}) as Partial<AgentExit>;
          // A runner ends a session as completed or crashed; `lost` is the server's to say.
          agent.ended();
          s.exit({ ...r, reason: r.reason === 'completed' ? 'completed' : 'crashed' } as AgentExit);
          break;
        }
      }
      answer();
    } catch (error) {
      answer(error);
    }
  }

  private async call(f: Extract<RunnerFrame, { t: 'call' }>): Promise<void> {
    const agent = this.agents.get(f.session);
    try {
      if (!agent) throw notYours(f.session);
      if (expired(f)) throw expiredError();
      const value = await agent.ctx.call(String(f.name), isObject(f.input) ? f.input : {});
      this.send({ t: 'result', id: f.id, ok: true, value });
    } catch (error) {
      this.send({ t: 'result', id: f.id, ok: false, error: errorBody(error) });
    }
  }

  /**
   * An agent's HTTP request (MCP, REST) made to the runner's local endpoint, replayed against
   * this server's own address and streamed back: the runner host needs nothing reachable but
   * this WebSocket. The target is always this server, so a path cannot point anywhere else.
   */
  private async tunnel(f: Extract<RunnerFrame, { t: 'http' }>): Promise<void> {
    const base = this.serverUrl();
    if (this.tunnels.size >= MAX_TUNNELS) {
      this.send({ t: 'http-head', id: f.id, status: 503, headers: { 'content-type': 'text/plain' } });
      this.send({ t: 'http-end', id: f.id, error: `more than ${MAX_TUNNELS} requests in flight` });
      return;
    }
    if (expired(f)) {
      this.send({ t: 'http-head', id: f.id, status: 504, headers: { 'content-type': 'application/json' } });
      this.send({
        t: 'http-data',
        id: f.id,
        chunk: Buffer.from(JSON.stringify({ error: EXPIRED })).toString('base64'),
      });
      this.send({ t: 'http-end', id: f.id });
      return;
    }
    if (!base || typeof f.path !== 'string' || !f.path.startsWith('/') || f.path.startsWith('//')) {
      this.send({ t: 'http-head', id: f.id, status: 502, headers: { 'content-type': 'text/plain' } });
      this.send({ t: 'http-end', id: f.id, error: 'no route' });
      return;
    }
    const ac = new AbortController();
    this.tunnels.set(f.id, ac);
    try {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(isObject(f.headers) ? f.headers : {})) {
        if (typeof v === 'string' && !HOP_BY_HOP.has(k.toLowerCase())) headers[k] = v;
      }
      const method = String(f.method).toUpperCase();
      const res = await fetch(new URL(f.path, base), {
        method,
        headers,
        ...(f.body !== null && method !== 'GET' && method !== 'HEAD' ? { body: f.body } : {}),
        signal: ac.signal,
      });
      const out: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        if (!HOP_BY_HOP.has(k)) out[k] = v;
      });
      this.send({ t: 'http-head', id: f.id, status: res.status, headers: out });
      if (res.body) {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          this.send({ t: 'http-data', id: f.id, chunk: Buffer.from(chunk).toString('base64') });
        }
      }
      this.send({ t: 'http-end', id: f.id });
    } catch (error) {
      if (!ac.signal.aborted) this.log.warn({ err: error }, 'runner tunnel request failed');
      this.send({ t: 'http-end', id: f.id, error: (error as Error).message });
    } finally {
      this.tunnels.delete(f.id);
    }
  }
}

/** Requests one runner may have in flight through its tunnel (its agents' MCP waits included). */
const MAX_TUNNELS = 512;

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'content-encoding',
]);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const offline = (name: string) =>
  new WarrenError('unavailable', `runner ${name} is offline`, { runner: name });

const notYours = (session: string) =>
  new WarrenError('forbidden', `session ${session} does not run on this runner`, { session });

const expiredError = () => new WarrenError(EXPIRED.code, EXPIRED.message, { ...EXPIRED.details });

function errorBody(error: unknown): ErrorBody {
  if (error instanceof WarrenError)
    return { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  return { code: 'internal', message: (error as Error)?.message ?? String(error) };
}
