import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { LifelineDeadline } from '../../../runtimes/process.ts';
import type {
  AgentContext,
  AgentGateway,
  AgentHandle,
  AgentInput,
  AgentSink,
  DeliveredMessage,
  RuntimeRegistry,
} from '../../../runtimes/types.ts';
import { systemClock } from '../../../util/clock.ts';
import { WarrenError } from '../../../vocab/errors.ts';
import type { StartContext } from '../wire.ts';

/** What the agents of a runner need from its connection. */
export interface Wire {
  /** A request the server answers (a report, a syscall). */
  request(frame: Record<string, unknown>): Promise<unknown>;
  send(frame: Record<string, unknown>): void;
  /** The runner's local endpoint agents reach warren through (the tunnel). */
  url(): string;
}

/**
 * The model gateway as an agent here reaches it: through the tunnel, with its session's token.
 * The server already holds the upstream its spawn gave; what the runtime would hold is dropped
 * here, so a runner never names where the server sends a key.
 */
const tunnelled = (url: string, credential: string): AgentGateway => ({
  url: (provider) => `${url}/v1/gateway/${provider}`,
  credential,
  hold: () => {},
});

/** How often queued input is offered again to an agent that was not at a safe point. */
const RETRY_INPUT_MS = 20;

/** An agent's sink's view of it: hosted once started; failed, its start threw. */
interface Life {
  hosted: Hosted | undefined;
  failed: boolean;
}

/** One agent running here: its handle and the input waiting for its next safe point. */
class Hosted {
  queue: AgentInput[] = [];
  timer: NodeJS.Timeout | undefined;
  /** The server's number of the last batch queued, and of the last handed to the agent. */
  last: number | undefined;
  took = 0;
  constructor(
    readonly id: string,
    readonly handle: AgentHandle,
  ) {}

  /** Hand over what is queued, merged into one batch, once the agent can take it. */
  flush(): void {
    if (this.queue.length === 0) return;
    if (!this.handle.ready) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, RETRY_INPUT_MS);
      return;
    }
    const batch = this.queue.splice(0);
    this.took = this.last ?? 0;
    const messages: DeliveredMessage[] = batch.flatMap((b) => b.messages);
    this.handle.deliver({ messages, text: batch.map((b) => b.text).join('\n') });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.queue = [];
  }
}

/**
 * The agents of one runner: started with this host's runtimes (the same code as a server's
 * local agents: process groups, lifelines, marks), reporting through the wire.
 */
export class RunnerAgents {
  private readonly hosted = new Map<string, Hosted>();

  constructor(
    private readonly runtimes: RuntimeRegistry,
    /** The mark prefix of this runner's agent processes. */
    private readonly run: string,
    /** Working directories must be under it; the default cwd. Null: anywhere. */
    private readonly cwdRoot: string | null,
    private readonly wire: Wire,
    /** What its agents' lifeline watchers hold: the server's beats move it (client.ts). */
    private readonly deadline?: LifelineDeadline,
  ) {}

  get size(): number {
    return this.hosted.size;
  }

  /** Started: how its input is acknowledged and whether it can take some now (remote-agent.ts). */
  async start(runtime: string, sc: StartContext): Promise<{ acksOnDeliver: boolean; ready: boolean }> {
    const rt = this.runtimes.get(runtime);
    if (!rt)
      throw new WarrenError('runtime_unavailable', `this runner does not run ${JSON.stringify(runtime)}`);
    if (this.hosted.has(sc.sessionId)) throw new WarrenError('conflict', `${sc.sessionId} already runs here`);
    const spec = { ...sc.spec, cwd: this.cwdOf(sc.spec.cwd) };
    rt.validate(spec);
    const id = sc.sessionId;
    const url = this.wire.url();
    // This agent's own life: set once it is hosted, ended if its start fails.
    const life: Life = { hosted: undefined, failed: false };
    const ctx: AgentContext = {
      sessionId: id,
      zone: sc.zone,
      depth: sc.depth,
      title: sc.title,
      spec,
      token: sc.token,
      ...(sc.gateway ? { gateway: tunnelled(url, sc.token) } : {}),
      url,
      mcpUrl: `${url}/mcp`,
      ...(sc.traceparent ? { traceparent: sc.traceparent } : {}),
      tools: sc.tools,
      run: this.run,
      ...(this.deadline ? { deadline: this.deadline } : {}),
      resumeState: sc.resumeState,
      resuming: sc.resuming ?? sc.resumeState !== null,
      sink: this.sinkOf(id, life),
      call: (name, input) => this.wire.request({ t: 'call', session: id, name, input }),
      clock: systemClock,
    };
    let handle: AgentHandle;
    try {
      handle = await rt.start(ctx);
    } catch (error) {
      life.failed = true;
      throw error;
    }
    life.hosted = new Hosted(id, handle);
    this.hosted.set(id, life.hosted);
    return { acksOnDeliver: handle.acksOnDeliver === true, ready: handle.ready };
  }

  deliver(session: string, input: AgentInput, n?: number): void {
    const h = this.hosted.get(session);
    if (!h) return;
    h.queue.push(input);
    if (typeof n === 'number') h.last = n;
    h.flush();
  }

  finish(session: string): void {
    this.hosted.get(session)?.handle.finish?.();
  }

  async stop(session: string): Promise<void> {
    const h = this.hosted.get(session);
    if (!h) return;
    this.hosted.delete(session);
    h.dispose();
    await h.handle.stop().catch(() => {});
  }

  /** The connection dropped: the server has suspended these sessions; end their processes. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.hosted.keys()].map((id) => this.stop(id)));
  }

  /**
   * The sink of one agent. Its reports go out under its session's id only while it is that
   * session's agent here: a report read after it was stopped (a turn's idle still in its pipe,
   * the runner reconnected and the session's next agent started) would be taken by the server
   * for the next agent's, and its idle would acknowledge input that agent never read.
   */
  private sinkOf(id: string, life: Life): AgentSink {
    // Ended: its start failed, or it was hosted and is not now (stopped, or its exit reported).
    const gone = () => life.failed || (life.hosted !== undefined && this.hosted.get(id) !== life.hosted);
    const report = (method: string, args: unknown[] = [], more: Record<string, unknown> = {}) => {
      if (gone()) return Promise.resolve();
      const done = this.wire.request({ t: 'sink', session: id, method, args, ...more }).then(() => {
        // A report is often the agent reaching a safe point (idle): offer it what waits.
        life.hosted?.flush();
      });
      // Like the server's own report queue: a caller that does not wait leaves nothing unhandled.
      done.catch(() => {});
      return done;
    };
    // A turn's start and end say how its input is acknowledged now (a `command` agent's rule
    // changes when it first reports a turn): the server acknowledges as this handle would.
    const turn = (method: 'busy' | 'idle') => {
      const h = life.hosted;
      if (!h) return report(method);
      const took = method === 'idle' && h.last !== undefined ? { took: h.took } : {};
      return report(method, [], { acks: h.handle.acksOnDeliver === true, ...took });
    };
    return {
      output: (text) => report('output', [text]),
      event: (type, payload) => report('event', [type, payload]),
      usage: (u) => report('usage', [u]),
      busy: () => turn('busy'),
      ready: () => void report('ready'),
      idle: () => {
        const h = life.hosted;
        if (h && h.queue.length > 0) {
          // Input reached here mid-turn (the agent began a turn of its own, or an older server
          // hands over everything at once): the server counts it as taken by the turn this idle
          // ends. It is handed over now instead and the idle not reported: the turn goes on,
          // and what it took is acknowledged when it ends.
          queueMicrotask(() => h.flush());
          return Promise.resolve();
        }
        return turn('idle');
      },
      saveState: (state) => report('saveState', [state]),
      activity: (text) => report('activity', [text]),
      exit: (result) => {
        if (gone()) return;
        const h = life.hosted;
        if (h) this.hosted.delete(id);
        h?.dispose();
        // Past the server's deadline its watcher ended it: not a crash to report (it would end
        // the session) but a lost server; the connection is dropped and the session suspended.
        if (this.deadline?.msLeft() === 0) return;
        this.wire.send({ t: 'sink', session: id, method: 'exit', args: [result] });
      },
      // This runner holds its agents' process groups (lifelines, marks); the server records none.
      spawned: () => {},
      exited: () => {},
    };
  }

  /** The agent's cwd: under the runner's root when it has one (default: the root itself). */
  private cwdOf(cwd: string | null): string | null {
    if (this.cwdRoot === null) return cwd;
    const root = realpathSync(this.cwdRoot);
    if (cwd === null) return root;
    const target = resolve(root, cwd);
    let real: string;
    try {
      real = realpathSync(target);
    } catch {
      throw new WarrenError('invalid_input', `cwd ${JSON.stringify(cwd)} does not exist on this runner`);
    }
    const rel = relative(root, real);
    if (rel.startsWith('..') || isAbsolute(rel)) {
      throw new WarrenError('forbidden', `cwd ${JSON.stringify(cwd)} is outside this runner's root ${root}`);
    }
    return real;
  }
}
