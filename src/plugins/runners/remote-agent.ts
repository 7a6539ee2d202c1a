import type { AgentContext, AgentHandle, AgentInput, AgentSink } from '../../runtimes/types.ts';
import type { RunnerConnection } from './connection.ts';

/** How long a stop waits for the runner to say its agent's process group is gone. */
const STOP_WAIT_MS = 10_000;

/**
 * The server's handle on an agent that runs on a runner: the same AgentHandle contract as a
 * local agent's, carried over the runner's WebSocket. Input is acknowledged as the runtime's
 * own handle says on the runner: once handed over (a `command` that reports no turns), or at
 * the idle that ends the turn that took it. Such an agent is handed one batch per turn, as a
 * local one is: what a turn cut off (the runner killed, the wire or the node lost) had taken
 * is unacknowledged, and handed again to the session's next agent.
 */
export class RemoteAgent implements AgentHandle {
  private stopped = false;
  /** The real runtime's own setting: from the runner's answer to `start`, then its reports. */
  acksOnDeliver = false;
  /** Handed a batch whose turn has not ended (only when acknowledged per turn). */
  private inTurn = false;
  /** Reported a turn's end (or `ready`) before the start was answered (the runner sent both at once). */
  private idled = false;
  /** Batches handed over, numbered on the wire: an idle says the last its agent had taken. */
  private handed = 0;

  constructor(
    readonly conn: RunnerConnection,
    readonly ctx: AgentContext,
  ) {}

  get ready(): boolean {
    return !this.stopped && this.conn.open && !this.inTurn;
  }

  /**
   * The runner started it: how its input is acknowledged, and whether it could take some then
   * (not while its first turn, the spawn prompt, runs; not before a `command` has shown whether
   * it reports turns). An idle or a `ready` that arrived before this answer came after that look
   * (a script reaches its first wait at once). Runners before this do not say `ready`: it is
   * taken as ready.
   */
  started(answer: unknown): void {
    const a = (answer ?? {}) as { acksOnDeliver?: unknown; ready?: unknown };
    this.acksOnDeliver = a.acksOnDeliver === true;
    this.inTurn = a.ready === false && !this.idled;
  }

  /**
   * A report of the agent, before it is applied; false: not to be applied. `acks` is its
   * handle's `acksOnDeliver` then (a `command` agent's changes when it first reports a turn).
   * An idle ends the turn, so the next batch may be handed over as the kernel applies it —
   * unless the agent had not taken the batch in flight (`took`, its number, is behind): it
   * ended a turn of its own while the batch was on its way, and applied, that idle would
   * acknowledge the batch. Its turn's idle comes later.
   */
  reported(method: string, acks: unknown, took: unknown): boolean {
    if (typeof acks === 'boolean') this.acksOnDeliver = acks;
    if (method === 'ready') {
      this.inTurn = false;
      this.idled = true;
      return true;
    }
    // A turn under way (of its own, or of the batch it took): the next batch waits for its idle.
    if (method === 'busy' && !this.acksOnDeliver) this.inTurn = true;
    if (method !== 'idle') return true;
    if (this.inTurn && typeof took === 'number' && took < this.handed) return false;
    this.inTurn = false;
    this.idled = true;
    return true;
  }

  deliver(input: AgentInput): void {
    if (!this.acksOnDeliver) this.inTurn = true;
    this.handed += 1;
    this.conn.send({ t: 'deliver', session: this.ctx.sessionId, input, n: this.handed });
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
