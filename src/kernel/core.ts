import type { SessionsTable } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../util/clock.ts';
import type { IdGenerator } from '../util/ids.ts';
import type { Log } from '../util/log.ts';
import type { KernelConfig } from './config.ts';
import type { FdTable } from './fdtable.ts';
import type { NodeRole } from './node.ts';
import type { KernelObserver } from './observer.ts';
import type { SecretBox } from './secrets.ts';
import type { ToolPolicy } from './types.ts';

/** What the kernel's mechanisms run after a commit: the world outside the database. */
export interface Effects {
  /** Start (or resume) the agent process of a session (`row`: its row, when the caller has it). */
  startAgent(sessionId: string, how: 'start' | 'resume', row?: SessionsTable): void;
  /** Dispose of the agent process of a session; idempotent. */
  stopAgent(sessionId: string): void;
  /** Arm the SIGTERM grace timer. */
  armTermDeadline(sessionId: string, at: number): void;
  /** Tell the session's agent (if this node runs it) that a stop was asked of it: `AgentHandle.termAsked`. */
  termAgent(sessionId: string): void;
  /** Arm (or with null, disarm) the wall-time deadline of a session's budget. */
  armBudgetDeadline(sessionId: string, at: number | null): void;
  /** Ask the session's agent to end now, as after a SIGTERM it took (if this node runs it). */
  finishAgent(sessionId: string): void;
  /** Whether this node runs a live agent for the session, or is starting one (it can be asked to stop). */
  hasAgent(sessionId: string): boolean;
}

/** The parts every kernel mechanism shares. One per kernel; never module state. */
export interface Core {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  config: KernelConfig;
  fdTable: FdTable;
  effects: Effects;
  toolPolicy: ToolPolicy;
  /** Seals and opens named secrets. */
  secretBox: SecretBox;
  /** Where diagnostics go (the server's logger, or stderr). */
  log: Log;
  /** This node among those sharing the database: ownership, fencing, cluster-wide phases. */
  node: NodeRole;
  /** Watchers of the hot paths (metrics); usually empty. */
  observers: KernelObserver[];
  /** The W3C trace context of the current call, when tracing is on (an agent's TRACEPARENT). */
  traceContext?: () => string | undefined;
}
