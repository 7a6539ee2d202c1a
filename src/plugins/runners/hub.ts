import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { EnvironmentProvider } from '../../kernel/environments.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { AgentContext, AgentHandle, Runtime } from '../../runtimes/types.ts';
import type { Log } from '../../util/log.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { operator } from '../../vocab/principal.ts';
import { RunnerConnection } from './connection.ts';
import { RunnerHeartbeat } from './heartbeat.ts';
import { RemoteAgent } from './remote-agent.ts';
import type { RunnerTokens } from './tokens.ts';
import {
  CLOSE_PROTOCOL,
  CLOSE_REFUSED,
  CONNECT_PATH,
  environmentOf,
  MAX_FRAME_BYTES,
  type RunnerFrame,
  type StartContext,
} from './wire.ts';

/** A runner must say hello this soon after connecting. */
const HELLO_MS = 10_000;
/** How long the server waits for a runner to start an agent. */
const START_MS = 30_000;

export interface HubOptions {
  /** Reanimate a dropped runner's sessions at once on another live runner of the same name. */
  failover: boolean;
  /** How often each runner is beaten (heartbeat.ts). */
  heartbeatMs: number;
}

/**
 * The runners connected to this server, by name: the `runner:<name>` environments. Starts
 * agents on them through the same Runtime contract as local ones, suspends a dropped
 * runner's sessions and reanimates them when a runner of that name is back.
 */
export class RunnerHub implements EnvironmentProvider {
  private readonly byName = new Map<string, Set<RunnerConnection>>();
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  /** Runner names that exist (have a live token), refreshed from the table. */
  private known = new Set<string>();
  private readonly reanimating = new Map<string, Promise<void>>();
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private readonly heartbeat: RunnerHeartbeat;

  constructor(
    private readonly kernel: Kernel,
    private readonly tokens: RunnerTokens,
    private readonly log: Log,
    private readonly opts: HubOptions,
  ) {
    this.heartbeat = new RunnerHeartbeat(
      kernel.clock,
      opts.heartbeatMs,
      () => this.connections(),
      () => kernel.node.lifelines.msLeft(),
      (conn, ms) => {
        this.log.warn(
          { runner: conn.info.name, connection: conn.id, silentMs: ms },
          'runner stopped answering its heartbeat: its sessions are suspended',
        );
        conn.terminate(`runner ${conn.info.name} did not answer its heartbeat for ${ms} ms`);
      },
    );
    this.heartbeat.start();
  }

  async refresh(): Promise<void> {
    const rows = await this.tokens.list();
    this.known = new Set(rows.filter((r) => r.revoked_at === null).map((r) => r.name));
  }

  // ------------------------------------------------------------------ EnvironmentProvider

  runtime(environment: string, name: string): Runtime {
    const runner = environment.slice('runner:'.length);
    const conns = this.byName.get(runner);
    if (!conns || conns.size === 0) {
      if (!this.known.has(runner)) {
        throw new WarrenError(
          'not_found',
          `environment ${environment} does not exist (no runner ${JSON.stringify(runner)}; warren runners list)`,
          { what: 'environment', id: environment },
        );
      }
      throw new WarrenError(
        'unavailable',
        `environment ${environment} is offline: no runner ${runner} is connected`,
        {
          environment,
        },
      );
    }
    if (![...conns].some((c) => c.info.runtimes.includes(name))) {
      throw new WarrenError(
        'runtime_unavailable',
        `environment ${environment} does not run ${JSON.stringify(name)}; it offers ${[...new Set([...conns].flatMap((c) => c.info.runtimes))].join(', ')}`,
        { environment, runtime: name },
      );
    }
    return {
      name,
      // The spec is checked where it runs (executables, files on the runner's host).
      validate: () => {},
      start: (ctx) => this.start(runner, name, ctx),
    };
  }

  online(environment: string): boolean {
    return (this.byName.get(environment.slice('runner:'.length))?.size ?? 0) > 0;
  }

  onlineEnvironments(): string[] {
    return this.names().map(environmentOf);
  }

  exists(environment: string): boolean {
    return this.known.has(environment.slice('runner:'.length)) || this.online(environment);
  }

  private async start(runner: string, runtime: string, ctx: AgentContext): Promise<AgentHandle> {
    // The least busy connection of that name that offers the runtime.
    const conn = [...(this.byName.get(runner) ?? [])]
      .filter((c) => c.open && c.info.runtimes.includes(runtime))
      .sort((a, b) => a.agents.size - b.agents.size)[0];
    if (!conn) throw new WarrenError('unavailable', `environment runner:${runner} is offline`);
    const agent = new RemoteAgent(conn, ctx);
    conn.agents.set(ctx.sessionId, agent);
    const start: StartContext = {
      sessionId: ctx.sessionId,
      zone: ctx.zone,
      depth: ctx.depth,
      title: ctx.title,
      spec: ctx.spec,
      token: ctx.token,
      tools: ctx.tools,
      resumeState: ctx.resumeState,
      resuming: ctx.resuming,
      ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
      // The kernel holds the upstream already; only that it does travels (never a key or URL).
      ...(ctx.gateway ? { gateway: true } : {}),
    };
    // The deadline it starts under is the current one (after a fence, the lease renewed since).
    if (conn.beats) this.heartbeat.beat(conn);
    try {
      agent.started(await conn.request({ t: 'start', runtime, ctx: start }, START_MS));
      return agent;
    } catch (error) {
      conn.forget(ctx.sessionId, agent);
      throw error;
    }
  }

  // ------------------------------------------------------------------ connections

  /** An HTTP upgrade on the runner path: authenticate, then hold the connection. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== CONNECT_PATH) return false;
    if (this.stopping) {
      socket.destroy();
      return true;
    }
    const auth = req.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    void this.tokens.verify(token).then(
      (row) => {
        if (!row) {
          socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: text/plain\r\n\r\nrunner token refused\n');
          return;
        }
        this.wss.handleUpgrade(req, socket, head, (ws) => this.held(ws, row.name));
      },
      () => socket.destroy(),
    );
    return true;
  }

  private held(ws: WebSocket, name: string): void {
    let conn: RunnerConnection | undefined;
    const hello = setTimeout(() => ws.close(CLOSE_PROTOCOL, 'no hello'), HELLO_MS);
    ws.on('error', () => {});
    ws.on('message', (data) => {
      let f: RunnerFrame;
      try {
        f = JSON.parse(String(data)) as RunnerFrame;
      } catch {
        ws.close(CLOSE_PROTOCOL, 'not JSON');
        return;
      }
      if (!conn) {
        if (f.t !== 'hello') return void ws.close(CLOSE_PROTOCOL, 'hello first');
        clearTimeout(hello);
        if (f.name && f.name !== name) return void ws.close(CLOSE_REFUSED, `this token is runner ${name}'s`);
        conn = this.register(ws, name, f);
        return;
      }
      conn.heardAt = this.kernel.clock.now();
      void conn.onFrame(f).catch((error) => this.log.warn({ err: error }, 'runner frame failed'));
    });
    ws.on('close', () => {
      clearTimeout(hello);
      if (conn) this.dropped(conn);
    });
  }

  private register(
    ws: WebSocket,
    name: string,
    hello: Extract<RunnerFrame, { t: 'hello' }>,
  ): RunnerConnection {
    const runtimes = Array.isArray(hello.runtimes) ? hello.runtimes.filter((r) => typeof r === 'string') : [];
    const conn = new RunnerConnection(
      this.kernel.ids.secret(8),
      {
        name,
        runtimes: runtimes.slice(0, 32),
        cwdRoot: typeof hello.cwdRoot === 'string' ? hello.cwdRoot : null,
        hostname: String(hello.hostname ?? '').slice(0, 200),
        pid: Number(hello.pid) || 0,
      },
      this.kernel.clock.now(),
      ws,
      () => this.kernel.config.publicUrl,
      this.log,
      hello.beats === true,
    );
    const set = this.byName.get(name) ?? new Set<RunnerConnection>();
    this.byName.set(name, set);
    set.add(conn);
    this.known.add(name);
    conn.send({ t: 'welcome', connection: conn.id, environment: environmentOf(name) });
    if (conn.beats) this.heartbeat.beat(conn);
    this.log.info({ runner: name, connection: conn.id, runtimes }, 'runner connected');
    void this.tokens.connected(name).catch(() => {});
    void this.reanimate(name);
    return conn;
  }

  private dropped(conn: RunnerConnection): void {
    const name = conn.info.name;
    this.byName.get(name)?.delete(conn);
    if (this.byName.get(name)?.size === 0) this.byName.delete(name);
    conn.closed(`runner ${name} disconnected`);
    this.log.warn({ runner: name, connection: conn.id }, 'runner disconnected');
    // Its sessions are being suspended (their reports are queued): reanimate them on another
    // runner of the same name, if there is one and failover is on, once that is recorded.
    if (this.opts.failover && this.online(environmentOf(name)) && !this.stopping) {
      this.kernel.clock.setTimeout(() => void this.reanimate(name), 50);
    }
  }

  /**
   * Resume the sessions of `runner:<name>` that a drop (or a server restart) suspended. One
   * pass at a time per name; the reconcile phase calls it too, as the backstop.
   */
  reanimate(name: string): Promise<void> {
    const running = this.reanimating.get(name);
    if (running) return running.then(() => this.reanimate(name));
    const p = this.resumeSuspended(name).finally(() => this.reanimating.delete(name));
    this.reanimating.set(name, p);
    return p;
  }

  private async resumeSuspended(name: string): Promise<void> {
    if (this.stopping || !this.online(environmentOf(name))) return;
    const rows = await this.kernel.suspendedSessions(environmentOf(name), 1000);
    for (const r of rows) {
      if (this.stopping || !this.online(environmentOf(name))) return;
      if (!resumable(r.suspendReason)) continue;
      await this.kernel.resume(operator('kernel', r.zone), r.id).catch((error) => {
        this.log.warn({ err: error, session: r.id }, 'reanimating a runner session failed');
      });
    }
  }

  /** Every online runner name (the reconcile backstop walks them). */
  names(): string[] {
    return [...this.byName.keys()];
  }

  connections(name?: string): RunnerConnection[] {
    const all =
      name === undefined
        ? [...this.byName.values()].flatMap((s) => [...s])
        : [...(this.byName.get(name) ?? [])];
    return all;
  }

  /** Close a runner's connections (revoked): their sessions are suspended. */
  disconnect(name: string, code: number, reason: string): void {
    for (const c of [...(this.byName.get(name) ?? [])]) c.close(code, reason);
    this.byName.delete(name);
    this.known.delete(name);
  }

  stop(): Promise<void> {
    if (this.stopped) return this.stopped;
    this.stopping = true;
    this.heartbeat.stop();
    for (const c of this.connections()) c.close(1001, 'server stopping');
    this.byName.clear();
    this.stopped = new Promise<void>((r) => this.wss.close(() => r()));
    return this.stopped;
  }
}

/**
 * Suspensions a runner coming back undoes: its drop, a server restart, a lost transport —
 * not a SIGSTOP or an agent ended from outside.
 */
function resumable(reason: string | null): boolean {
  if (reason === null) return false;
  return reason.startsWith('runner ') || reason === 'kernel restart' || reason === 'transport lost';
}
