import type { Clock } from '../util/clock.ts';
import type { Usage } from '../vocab/usage.ts';
import type { LifelineDeadline } from './process/deadline.ts';

/** One message handed to an agent, with its seq so the agent can drop repeats. */
export interface DeliveredMessage {
  seq: number;
  fd: number;
  stream: string;
  from: string;
  text: string;
  kind: 'message' | 'signal';
  signal?: string;
  data?: unknown;
}

/** Everything pending for an agent at a safe point, batched into one input. */
export interface AgentInput {
  messages: DeliveredMessage[];
  /** The batch rendered as text, for agents that take text. */
  text: string;
}

/**
 * How a running agent reports back; the kernel turns each call into log events, applied in
 * the order they were made. The promises settle once recorded: await them to order a
 * report before a syscall the agent makes next.
 */
export interface AgentSink {
  /** Assistant text: logged, and remembered as the session's last message. */
  output(text: string): Promise<void>;
  /** Anything else worth recording: tool calls and results, turn input, raw runtime notes. */
  event(type: string, payload: Record<string, unknown>): Promise<void>;
  usage(usage: Usage): Promise<void>;
  /** Working on a turn. */
  busy(): Promise<void>;
  /** Turn over: a safe point, pending input may be delivered now. */
  idle(): Promise<void>;
  /**
   * It can take input now, and no turn ended: an agent that was not ready when it started (a
   * `command` that has not yet shown whether it reports turns) has become so.
   */
  ready(): void;
  /** Remember what resume needs (a position, a CLI session id). */
  saveState(state: Record<string, unknown>): Promise<void>;
  /** The agent's process is gone. */
  exit(result: AgentExit): void;
  /**
   * A short status of what the agent is doing besides its turn, e.g. "retrying model API,
   * attempt 3/10"; null clears it (the next assistant message or result arrived).
   */
  activity(text: string | null): Promise<void>;
  /** The runtime started an agent process group (codex: one per turn): the kernel records it. */
  spawned(proc: AgentProcess): void;
  /** That process group is gone (exited, or killed and reaped). */
  exited(pid: number): void;
}

/** One agent process warren started: enough to find it again after a crash, despite pid reuse. */
export interface AgentProcess {
  pid: number;
  /** Its process group (every agent leads its own, so this is its pid). */
  pgid: number;
  /** `processStartTime(pid)`: with the pid, names this process and no later one. */
  startTime: string | null;
}

export interface AgentExit {
  /**
   * `lost`: the wire to the agent broke (its runner disconnected), the process is not known to
   * have ended: the session is suspended, not ended (seed 001: drops suspend), `error` says why.
   */
  reason: 'completed' | 'crashed' | 'lost';
  error?: string;
  code?: number | null;
  /** The signal that ended the process, when warren did not send it: the agent was lost, not failed. */
  signal?: string | null;
  stderrTail?: string;
}

export interface AgentSpec {
  prompt: string | null;
  config: Record<string, unknown>;
  cwd: string | null;
  model: string | null;
  env: Record<string, string>;
  /** Its persona's system prompt, for the model (each runtime says how it passes it on). */
  systemPrompt?: string;
}

export interface AgentContext {
  sessionId: string;
  zone: string;
  depth: number;
  title: string | null;
  spec: AgentSpec;
  /** The session's scoped token (the same one on every resume). */
  token: string;
  /** Where agents reach the kernel over HTTP, when it listens. */
  url: string | null;
  /** The kernel's MCP endpoint (Streamable HTTP; send `Authorization: Bearer <token>`), when it listens. */
  mcpUrl: string | null;
  /** W3C trace context of the call that started this agent (tracing on): its TRACEPARENT. */
  traceparent?: string;
  /** The MCP tools (syscall names) this session may call; `tools/list` shows exactly these. */
  tools: readonly string[];
  /**
   * The mark prefix of this node's agent processes (`spawnGroup({ run })`): a successor of a
   * crashed server ends whatever still carries it.
   */
  run: string;
  /**
   * The deadline its process's lifeline watcher holds (pass it to spawnGroup): a node in a
   * cluster, or a runner, beats it; past it the watcher ends the agent on its own. Absent: the
   * watcher ends it when the server's end of the lifeline closes, only.
   */
  deadline?: LifelineDeadline;
  /**
   * Run its processes confined (bubblewrap): pass it to spawnGroup through `confineOptions`
   * (containment.ts). Absent or null: unconfined (`containment: none`, or not a process).
   */
  confine?: AgentConfinement | null;
  /**
   * The model gateway, when warren serves one for this agent (docs/gateway.md): a runtime
   * that speaks a provider it fronts points its CLI there with `credential`, and holds the
   * provider key and URL it would have used as the session's upstream instead of passing
   * them on. Absent or null: the agent reaches its provider directly.
   */
  gateway?: AgentGateway | null;
  /** Present when resuming: what the agent saved last. */
  resumeState: Record<string, unknown> | null;
  /** The session ran before (a resume or a reanimation), whether or not it saved state. */
  resuming: boolean;
  sink: AgentSink;
  /** Call a syscall as this session (for in-process agents such as `script`). */
  call(name: string, input: Record<string, unknown>): Promise<unknown>;
  clock: Clock;
}

/** A model provider the gateway fronts. */
export type GatewayProvider = 'anthropic' | 'openai';

/** One agent's access to the model gateway. */
export interface AgentGateway {
  /** The provider's base URL at the gateway, as this agent reaches it (`…/v1/gateway/<provider>`). */
  url(provider: GatewayProvider): string;
  /** What the agent authenticates with there (its session's token: it dies with the session). */
  credential: string;
  /** Keep the session's real endpoint and key server-side, for as long as this agent runs. */
  hold(
    provider: GatewayProvider,
    upstream: { baseUrl: string; key: string; auth: 'x-api-key' | 'bearer' },
  ): void;
}

export interface AgentHandle {
  /** True when the agent can take input now (at a safe point). */
  readonly ready: boolean;
  /**
   * True for agents without turns: input counts as acknowledged once handed over. Otherwise
   * it is acknowledged when the agent next reports idle (the turn that took it has ended).
   */
  readonly acksOnDeliver?: boolean;
  deliver(input: AgentInput): void;
  /** Dispose of the agent's process; idempotent. */
  stop(): Promise<void>;
  /**
   * The kernel asks the agent to end now (it has a pending SIGTERM and has just gone idle):
   * close its input so it exits 0, then report `exit({ reason: 'completed' })`. Optional for
   * in-process agents that have no process to end (the kernel stops those).
   */
  finish?(): void;
  /**
   * A stop was asked of the session (a SIGTERM, or a quiet end) while its agent may be busy;
   * the kernel keeps the grace period, then SIGKILL, either way. An agent that can tell nothing
   * in progress could finish (claude-code waiting to retry a model API call) ends now, reporting
   * `exit({ reason: 'completed', error: <why> })`, recorded as `terminated`; otherwise it
   * remembers the request for when that state comes. Optional.
   */
  termAsked?(): void;
}

/**
 * One agent's sandbox as the kernel decides it (docs/security.md, "Containment"); each runtime
 * adds its working directory and private files (containment.ts).
 */
export interface AgentConfinement {
  bwrap: string;
  /** Never visible, and never a working directory (warren's data dir, the other agents' files). */
  secret: readonly string[];
  /** Hidden too, unless it is the working directory itself (the server's home, its temp dir). */
  private: readonly string[];
  /** Paths inside a secret one that may still be a working directory. */
  exempt: readonly string[];
  /** Read-only even inside a hidden path (warren's package, node). */
  readable: readonly string[];
  /** Its own home, made for it (writable, HOME). */
  home: string;
  network: 'full' | 'none';
  /** Network `none`: warren's HTTP address on the host, reached through a bound socket. */
  endpoint: { host: string; port: number } | null;
}

/** How one kind of agent is started, fed, resumed and stopped. */
export interface Runtime {
  readonly name: string;
  /** Its agents run inside the server (script): no process to confine. */
  readonly inProcess?: boolean;
  /** It starts its processes confined when the context says so (`ctx.confine`). */
  readonly confines?: boolean;
  /**
   * Its agent can run shell commands (default true for a process): where no confinement is
   * available, such agents are refused unless the operator set `containment: none`.
   */
  runsShell?(spec: AgentSpec): boolean;
  /** Reject a bad spawn before anything is written, with a typed error naming what is wrong. */
  validate(spec: AgentSpec): void;
  /** Start, or resume when `ctx.resumeState` is set. */
  start(ctx: AgentContext): Promise<AgentHandle>;
  /** The kernel shut down, its agents stopped: release what the runtime holds (worker threads). */
  close?(): Promise<void>;
}

export type RuntimeRegistry = ReadonlyMap<string, Runtime>;

export function renderInput(messages: DeliveredMessage[]): string {
  return messages
    .map((m) =>
      m.kind === 'signal'
        ? m.text
        : `[message fd=${m.fd} stream=${m.stream} from=${m.from} seq=${m.seq}] ${m.text}`,
    )
    .join('\n');
}
