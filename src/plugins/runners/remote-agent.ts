import type { AgentContext, AgentHandle, AgentInput, AgentSink } from '../../runtimes/types.ts';
import type { RunnerConnection } from './connection.ts';

/** How long a stop waits for the runner to say its agent's process group is gone. */
const STOP_WAIT_MS = 10_000;

/**
 * The server's handle on an agent that runs on a runner: the same AgentHandle contract as a
 * local agent's, carried over the runner's WebSocket. The runner queues input until its agent
 * is at a safe point, so this handle is ready whenever the wire is up.
 */
export class RemoteAgent implements AgentHandle {
  private stopped = false;
  /** Set from the runner's answer to `start`: the real runtime's own setting. */
  acksOnDeliver = false;

  constructor(
    readonly conn: RunnerConnection,
    readonly ctx: AgentContext,
  ) {}

  get ready(): boolean {
    return !this.stopped && this.conn.open;
  }

  deliver(input: AgentInput): void {
    this.conn.send({ t: 'deliver', session: this.ctx.sessionId, input });
  }

  finish(): void {
    if (!this.stopped) this.conn.send({ t: 'finish', session: this.ctx.sessionId });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.conn.forget(this.ctx.sessionId, this);
    if (!this.conn.open) return;
    await this.conn.request({ t: 'stop', session: this.ctx.sessionId }, STOP_WAIT_MS).catch(() => {});
  }

  /** The runner reported its agent's process ended: nothing is left to stop. */
  ended(): void {
    this.stopped = true;
    this.conn.forget(this.ctx.sessionId, this);
  }

  /** The wire broke: the session is suspended (seed 001: drops suspend), not ended. */
  lost(why: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ctx.sink.exit({ reason: 'lost', error: why });
  }

  get sink(): AgentSink {
    return this.ctx.sink;
  }
}
