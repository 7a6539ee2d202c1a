import { hostname } from 'node:os';
import WebSocket from 'ws';
import { LifelineDeadline } from '../../../runtimes/process.ts';
import { sweepRunDir } from '../../../runtimes/rundir.ts';
import type { RuntimeRegistry } from '../../../runtimes/types.ts';
import { systemClock } from '../../../util/clock.ts';
import { WarrenError } from '../../../vocab/errors.ts';
import { InFlight } from '../in-flight.ts';
import {
  CLOSE_REFUSED,
  CONNECT_PATH,
  type ErrorBody,
  EXPIRED,
  expired,
  MAX_FRAME_BYTES,
  type RunnerFrame,
  type ServerFrame,
} from '../wire.ts';
import { RunnerAgents } from './agents.ts';
import { TunnelProxy } from './proxy.ts';

export interface RunnerOptions {
  /**
   * The URLs (http(s)://…) of the nodes of one warren: the runner connects out to the first
   * that answers and, when it loses that node (or sees it fenced), to the next, round robin.
   */
  servers: readonly string[];
  token: string;
  name: string;
  runtimes: RuntimeRegistry;
  cwdRoot: string | null;
  /** Progress lines (connected, dropped). */
  log: (line: string) => void;
  /** Longest wait between reconnect attempts. */
  maxBackoffMs?: number;
}

/** A runner's requests wait this long for the server. */
const REQUEST_MS = 60_000;

/**
 * `warren runner`: connects out to a server over one WebSocket, says what it runs, and runs
 * the agents the server starts here. If the connection drops it ends its agents (the server
 * has suspended their sessions and will resume them) and connects again; a refused token
 * ends it.
 */
export class Runner {
  private ws: WebSocket | undefined;
  private connected = false;
  private stopped = false;
  private nextId = 1;
  private readonly inFlight = new InFlight('internal');
  private readonly agents: RunnerAgents;
  /** Its agents' mark and private run dir (`warren-run-<run>`). */
  private readonly run: string;
  private readonly proxy: TunnelProxy;
  private backoff = 200;
  /** Which of `servers` the runner connects to next (round robin over failures and drops). */
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The deadline its agents' lifeline watchers hold: moved by each beat of the server. */
  private readonly deadline = new LifelineDeadline(systemClock);
  /** Fires when the server's next beat is overdue: the server is taken for lost. */
  private watchdog: NodeJS.Timeout | undefined;
  /** Resolves when the runner ends for good (stopped, or its token refused): the exit code. */
  readonly done: Promise<number>;
  private finish: (code: number) => void = () => {};

  constructor(private readonly opts: RunnerOptions) {
    this.done = new Promise((r) => {
      this.finish = r;
    });
    this.proxy = new TunnelProxy({
      up: () => this.connected,
      open: (req) => {
        const id = this.nextId++;
        this.send({ t: 'http', id, ...req });
        return id;
      },
      abort: (id) => this.send({ t: 'http-abort', id }),
    });
    // Marks of this runner's agent processes: per runner process, so two runners of one name
    // on a host never end each other's agents. Its agents die with it through their lifelines.
    this.run = `wr_${(opts.name || 'runner').replace(/[^A-Za-z0-9_-]/g, '_')}_${process.pid}`;
    this.agents = new RunnerAgents(
      opts.runtimes,
      this.run,
      opts.cwdRoot,
      {
        request: (frame) => this.request(frame),
        send: (frame) => this.send(frame as RunnerFrame),
        url: () => this.proxy.url(),
      },
      this.deadline,
    );
  }

  async start(): Promise<void> {
    await this.proxy.listen();
    this.connect();
  }

  private connect(): void {
    if (this.stopped) return;
    const servers = this.opts.servers;
    const server = servers[this.next % servers.length]!;
    const url = new URL(CONNECT_PATH, server);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${this.opts.token}` },
      maxPayload: MAX_FRAME_BYTES,
    });
    this.ws = ws;
    ws.on('open', () => {
      this.send({
        t: 'hello',
        name: this.opts.name,
        runtimes: [...this.opts.runtimes.keys()],
        cwdRoot: this.opts.cwdRoot,
        hostname: hostname(),
        pid: process.pid,
        beats: true,
      });
    });
    ws.on('unexpected-response', (_req, res) => {
      if (res.statusCode === 401) {
        this.opts.log(`runner ${this.opts.name}: the server refused the token`);
        this.end(3);
      }
      ws.terminate();
    });
    ws.on('message', (data) => {
      let f: ServerFrame;
      try {
        f = JSON.parse(String(data)) as ServerFrame;
      } catch {
        return;
      }
      // A frame's failure is logged, never an unhandled rejection: that would end the runner
      // and every agent it holds.
      this.onFrame(f).catch((error) =>
        this.opts.log(`runner ${this.opts.name}: frame ${f.t} failed: ${(error as Error)?.message ?? error}`),
      );
    });
    ws.on('error', () => {}); // 'close' follows
    ws.on('close', (code, reason) => void this.dropped(code, String(reason)));
  }

  private async dropped(code: number, reason: string): Promise<void> {
    const was = this.connected;
    this.connected = false;
    this.ws = undefined;
    if (this.watchdog) clearTimeout(this.watchdog);
    this.inFlight.failAll(() => new WarrenError('unavailable', 'disconnected from the server'));
    this.proxy.failAll();
    // The server has suspended the sessions of these agents: it resumes them on reconnect.
    await this.agents.stopAll();
    if (was) this.opts.log(`runner ${this.opts.name}: disconnected (${code}${reason ? ` ${reason}` : ''})`);
    if (code === CLOSE_REFUSED) {
      this.opts.log(`runner ${this.opts.name}: refused by the server: ${reason}`);
      return this.end(3);
    }
    if (this.stopped) return;
    // The next node of the list: the one just lost (or that never answered) may be down,
    // paused or fenced; any node of the warren can take this runner. Backoff grows only once
    // a whole round of the list has failed.
    this.next += 1;
    const roundDone = this.next % this.opts.servers.length === 0;
    this.timer = setTimeout(() => this.connect(), roundDone ? this.backoff : 50);
    if (roundDone) this.backoff = Math.min(this.backoff * 2, this.opts.maxBackoffMs ?? 5_000);
  }

  private async onFrame(f: ServerFrame): Promise<void> {
    switch (f.t) {
      case 'welcome':
        this.connected = true;
        this.backoff = 200;
        this.opts.log(
          `runner: connected as ${f.environment} (${f.connection}) to ${this.server()}; tunnel ${this.proxy.url()}`,
        );
        return;
      case 'beat':
        return this.beat(f.leftMs, f.withinMs);
      case 'result':
        return this.inFlight.settle(f);
      case 'start':
        if (expired(f)) return this.send({ t: 'result', id: f.id, ok: false, error: { ...EXPIRED } });
        return this.answer(f.id, () => this.agents.start(f.runtime, f.ctx));
      case 'stop':
        // A stop is never refused for being late: ending an agent is always safe.
        return this.answer(f.id, () => this.agents.stop(f.session));
      case 'finish':
        return this.agents.finish(f.session);
      case 'deliver':
        return this.agents.deliver(f.session, f.input as never, f.n);
      case 'http-head':
        return this.proxy.head(f.id, f.status, f.headers);
      case 'http-data':
        return this.proxy.data(f.id, f.chunk);
      case 'http-end':
        return this.proxy.end(f.id, f.error);
    }
  }

  /**
   * The server is alive and holds its lease for `leftMs` more: the agents' watchers may let them
   * run that long. No beat within `withinMs`: the server (or the way to it) is gone; the
   * connection is dropped (its agents end) and made again.
   */
  private beat(leftMs: number, withinMs: number): void {
    const left = Math.max(0, Number(leftMs) || 0);
    this.deadline.extend(left);
    if (left === 0 && this.opts.servers.length > 1) {
      // Its node holds no lease (fenced: cut off from its database, or lost): its agents end
      // now, and another node of the list may run them.
      this.opts.log(`runner ${this.opts.name}: ${this.server()} is fenced; connecting to another node`);
      this.ws?.terminate();
      return;
    }
    this.send({ t: 'beat' });
    if (this.watchdog) clearTimeout(this.watchdog);
    const ws = this.ws;
    this.watchdog = setTimeout(
      () => {
        this.opts.log(
          `runner ${this.opts.name}: no heartbeat from the server in ${withinMs} ms; reconnecting`,
        );
        ws?.terminate();
      },
      Math.max(0, Number(withinMs) || 0),
    );
  }

  /** The node this runner is (or was last) connected to. */
  private server(): string {
    return this.opts.servers[this.next % this.opts.servers.length]!;
  }

  private async answer(id: number, fn: () => Promise<unknown>): Promise<void> {
    try {
      const value = await fn();
      this.send({ t: 'result', id, ok: true, value });
    } catch (error) {
      this.send({ t: 'result', id, ok: false, error: errorBody(error) });
    }
  }

  private request(frame: Record<string, unknown>): Promise<unknown> {
    if (!this.connected)
      return Promise.reject(new WarrenError('unavailable', 'disconnected from the server'));
    const id = this.nextId++;
    return this.inFlight.start(
      id,
      REQUEST_MS,
      () => new WarrenError('unavailable', 'the server did not answer'),
      () => this.send({ ...frame, id, deadline: Date.now() + REQUEST_MS } as RunnerFrame),
    );
  }

  private send(frame: RunnerFrame): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  private end(code: number): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.watchdog) clearTimeout(this.watchdog);
    void this.close().then(() => this.finish(code));
  }

  /** Stop: end the agents, close the connection and the local endpoint. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.watchdog) clearTimeout(this.watchdog);
    await this.close();
    this.finish(0);
  }

  private async close(): Promise<void> {
    await this.agents.stopAll();
    // Each agent removed its own dir as it ended; their run root goes too, as a server's does.
    sweepRunDir(this.run);
    this.ws?.close(1000, 'runner stopping');
    await this.proxy.close();
  }
}

function errorBody(error: unknown): ErrorBody {
  if (error instanceof WarrenError)
    return { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  return { code: 'runtime_failed', message: (error as Error)?.message ?? String(error) };
}
