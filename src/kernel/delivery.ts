import type { AgentHandle, DeliveredMessage } from '../runtimes/types.ts';
import { renderInput } from '../runtimes/types.ts';
import type { LogEvent } from '../store/events.ts';
import type { FdsTable } from '../store/schema.ts';
import type { Core } from './core.ts';
import { Handed } from './handed.ts';
import { recordInput } from './input-record.ts';
import { canRead, type MessageView } from './records.ts';
import { isInit } from './zones.ts';

/**
 * Moves committed messages to their holders. `async` fds of running agents are pushed at
 * the agent's next safe point, everything pending batched into one input; `sync` and
 * `detach` fds wait for a read, which a waiting reader is woken for. Always from the log:
 * whatever is past a cursor after a restart is still due.
 */
export class Delivery {
  private pumps = new Map<string, Pump>();
  private waiters = new Map<string, Set<() => void>>();
  private turnListeners = new Set<(sessionId: string) => void>();

  constructor(private readonly core: Core) {}

  /** Called with every committed batch, in seq order. */
  onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.type !== 'stream.message' || !e.stream_id) continue;
      const meta = this.core.fdTable.stream(e.stream_id);
      for (const fd of this.core.fdTable.subscribers(e.stream_id)) {
        if (!canRead(fd.perm)) continue;
        const own = fd.holder === e.actor && !meta?.selfEcho;
        this.wake(fd.id);
        if (fd.mode !== 'async') continue;
        if (own) {
          // Nobody gets their own echo. Acknowledged by the pump of the node that runs the
          // agent, or by the next agent's backlog; never here without one: in a cluster the
          // agent may run on another node, and a cursor moved here (in memory, where a takeover
          // takes it up) would skip what that agent was still due.
          this.pumps.get(fd.holder)?.own(fd.id, e.seq);
          continue;
        }
        if (isInit(fd.holder)) {
          // Nothing to hand over: init consumes what reaches it.
          this.core.fdTable.ack(fd.id, e.seq);
          continue;
        }
        this.pumps.get(fd.holder)?.add(fd, e);
      }
    }
  }

  /**
   * An agent came up: hand it everything its async fds have pending in the log — from their
   * acknowledged cursors, not from what an earlier agent of the session was handed in this
   * node's life: one ended mid-turn (its node fenced, then serving again) never answered it.
   */
  async attach(sessionId: string, handle: AgentHandle): Promise<void> {
    for (const fd of this.core.fdTable.heldBy(sessionId)) this.core.fdTable.rewind(fd.id);
    const pump = new Pump(this.core, sessionId, handle);
    this.pumps.set(sessionId, pump);
    if (this.core.node.clustered) await this.core.fdTable.refresh(sessionId);
    await pump.backlog();
    pump.kick();
  }

  detach(sessionId: string): void {
    this.pumps.delete(sessionId);
  }

  /**
   * How the session's agent's `input` report is stored (input-record.ts): as references to the
   * messages this node handed it, when it handed it every one of them; else as the agent gave it.
   */
  inputRecord(sessionId: string, payload: Record<string, unknown>): Record<string, unknown> {
    const pump = this.pumps.get(sessionId);
    return recordInput(payload, (seq) => pump?.handedFd(seq));
  }

  /** Messages committed for this node's agents and not yet handed over, and the oldest one's commit time. */
  backlog(): { messages: number; oldestTs: number | null } {
    let messages = 0;
    let oldestTs: number | null = null;
    for (const pump of this.pumps.values()) {
      const p = pump.backlogInfo();
      messages += p.messages;
      if (p.oldestTs !== null && (oldestTs === null || p.oldestTs < oldestTs)) oldestTs = p.oldestTs;
    }
    return { messages, oldestTs };
  }

  /**
   * The agent says its turn is over. What it was handed up to now is what that turn took:
   * taken here, at the moment of the report, and acknowledged once the report is recorded
   * (`turnRecorded`), so input handed over in between is not acknowledged by mistake.
   */
  turnEnding(sessionId: string): Map<string, number> {
    return this.pumps.get(sessionId)?.endTurn() ?? new Map();
  }

  /**
   * The agent is at a safe point (it reported idle): hand it what waited for it now, not once
   * the idle is recorded, so the next turn's first reports (busy, input) join the idle's write
   * instead of waiting one commit for it. What it was handed is acknowledged only by the end
   * of the turn that takes it, as ever.
   */
  safePoint(sessionId: string): void {
    this.pumps.get(sessionId)?.kick();
  }

  turnRecorded(sessionId: string, consumed: Map<string, number>): void {
    for (const [fdId, seq] of consumed) this.core.fdTable.ack(fdId, seq);
    for (const l of this.turnListeners) l(sessionId);
    const pump = this.pumps.get(sessionId);
    pump?.turnAcknowledged(consumed);
    pump?.kick();
  }

  /** Called after each turn's input has been acknowledged. */
  onTurnRecorded(listener: (sessionId: string) => void): () => void {
    this.turnListeners.add(listener);
    return () => this.turnListeners.delete(listener);
  }

  /**
   * Start hearing the fd's wake-ups now, before looking at the log: a message fanned out
   * between the look and the wait then ends the wait at once instead of being missed (the
   * reader would sleep its whole wait with the message due). `close()` when done.
   */
  listen(fdId: string): FdWaiter {
    let set = this.waiters.get(fdId);
    if (!set) {
      set = new Set();
      this.waiters.set(fdId, set);
    }
    const waiters = set;
    const waiter = new FdWaiter(this.core, () => {
      waiters.delete(wake);
      if (waiters.size === 0 && this.waiters.get(fdId) === waiters) this.waiters.delete(fdId);
    });
    const wake = () => waiter.wake();
    waiters.add(wake);
    return waiter;
  }

  private wake(fdId: string): void {
    const set = this.waiters.get(fdId);
    if (set) for (const w of [...set]) w();
  }
}

/** One reader's wait on an fd (see `Delivery.listen`). */
export class FdWaiter {
  private woken = false;
  private resolve: (() => void) | undefined;

  constructor(
    private readonly core: Core,
    readonly close: () => void,
  ) {}

  wake(): void {
    this.woken = true;
    this.resolve?.();
  }

  /** Resolve when the fd was woken since `listen` (at once if it was), the wait runs out, or the caller gives up. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.woken || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.core.clock.clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.resolve = undefined;
        resolve();
      };
      const timer = this.core.clock.setTimeout(done, ms, { keepAlive: true });
      signal?.addEventListener('abort', done, { once: true });
      this.resolve = done;
    });
  }
}

/** A backlog this deep is handed over in slices: one input stays a readable size. */
const MAX_BATCH = 500;
/**
 * Messages remembered as handed over (seq -> fd number) until the agent reports the input that
 * took them: a few batches' worth, so an agent that never reports input (`command`) costs no more.
 */
const MAX_HANDED = 4 * MAX_BATCH;

class Pump {
  private pending = new Map<number, { fd: FdsTable; event: LogEvent }>();
  /** Handed over, waiting for the end of the turn that takes them. */
  private inflight = new Map<string, number>();
  /** What the turn that just ended took, until its end is recorded and that is acknowledged. */
  private ending: Map<string, number> | undefined;
  /** The agent's own latest message per fd, not acknowledged yet: something before it was due. */
  private readonly ownHeld = new Map<string, number>();
  /** What was handed over, by seq: the fd it came on (see `Delivery.inputRecord`). */
  private readonly handed = new Handed(MAX_HANDED);
  private more = false;
  private loading = false;

  constructor(
    private readonly core: Core,
    private readonly sessionId: string,
    private readonly handle: AgentHandle,
  ) {}

  backlogInfo(): { messages: number; oldestTs: number | null } {
    let oldestTs: number | null = null;
    for (const { event } of this.pending.values())
      if (oldestTs === null || event.ts < oldestTs) oldestTs = event.ts;
    return { messages: this.pending.size, oldestTs };
  }

  add(fd: FdsTable, event: LogEvent): void {
    if (event.seq <= this.core.fdTable.cursor(fd.id)) return;
    this.pending.set(event.seq, { fd, event });
    this.kick();
  }

  /** Load what the log has due on this session's async fds (a slice of it, if it is deep). */
  async backlog(): Promise<void> {
    this.loading = true;
    this.more = false;
    try {
      for (const fd of this.core.fdTable.heldBy(this.sessionId)) {
        if (fd.mode !== 'async' || !canRead(fd.perm)) continue;
        const meta = this.core.fdTable.stream(fd.stream_id);
        const due = await this.core.store.log.messagesAfter(
          fd.stream_id,
          this.core.fdTable.cursor(fd.id),
          MAX_BATCH,
        );
        if (due.length === MAX_BATCH) this.more = true;
        for (const e of due) {
          if (e.actor === this.sessionId && !meta?.selfEcho) this.own(fd.id, e.seq);
          else this.pending.set(e.seq, { fd, event: e });
        }
      }
    } finally {
      this.loading = false;
    }
  }

  kick(): void {
    if (this.pending.size === 0 || !this.handle.ready || this.loading) return;
    const batch = this.takeBatch();
    if (batch.length === 0) return;
    const messages = coalesce(batch.map(({ fd, event }) => toDelivered(fd, event, this.core)));
    // Remembered first: an agent may report the input it took from inside `deliver`. One that
    // acknowledges on delivery has no turns that take input (a `command` that reports none):
    // nothing would look this up, and at 100 listeners the ring was 4 % of a room's fan-out.
    if (!this.handle.acksOnDeliver) for (const m of messages) this.handed.remember(m.seq, m.fd);
    // Handed over now; acknowledged (and so persisted) when the turn that takes them ends.
    this.handle.deliver({ messages, text: renderInput(messages) });
    if (this.core.observers.length > 0) {
      const at = this.core.clock.now();
      const events = batch.map((b) => b.event);
      for (const o of this.core.observers) o.delivered?.(events, at);
    }
    if (this.handle.acksOnDeliver) {
      // Taken as handed over: acknowledged now (and whatever waited from before it acked so).
      if (this.inflight.size > 0)
        for (const [fdId, seq] of this.takeInflight()) this.core.fdTable.ack(fdId, seq);
      for (const { fd, event } of batch) this.core.fdTable.ack(fd.id, event.seq);
      if (this.ownHeld.size > 0) this.releaseOwn();
    } else {
      for (const { fd, event } of batch) {
        this.core.fdTable.advance(fd.id, event.seq);
        this.inflight.set(fd.id, Math.max(this.inflight.get(fd.id) ?? 0, event.seq));
      }
    }
    if (this.more && this.pending.size === 0) void this.backlog().then(() => this.kick());
  }

  /**
   * Up to MAX_BATCH pending messages past their fd's cursor, oldest first, taken out of
   * `pending`; none due clears it. Every delivery of a room's message runs this, so it is a
   * loop rather than a chain of array copies: at 100 listeners the chain was most of a pump's time.
   */
  private takeBatch(): Array<{ fd: FdsTable; event: LogEvent }> {
    const batch: Array<{ fd: FdsTable; event: LogEvent }> = [];
    let sorted = true;
    for (const entry of this.pending.values()) {
      if (entry.event.seq <= this.core.fdTable.cursor(entry.fd.id)) continue;
      const last = batch[batch.length - 1];
      if (last && last.event.seq > entry.event.seq) sorted = false;
      batch.push(entry);
    }
    if (batch.length === 0) {
      this.pending.clear();
      return batch;
    }
    if (!sorted) batch.sort((a, b) => a.event.seq - b.event.seq);
    if (batch.length > MAX_BATCH) batch.length = MAX_BATCH;
    for (const b of batch) this.pending.delete(b.event.seq);
    return batch;
  }

  /** The fd number a message was handed over on, or undefined when this pump did not hand it over. */
  handedFd(seq: number): number | undefined {
    return this.handed.take(seq);
  }

  takeInflight(): Map<string, number> {
    const taken = this.inflight;
    this.inflight = new Map();
    return taken;
  }

  /** The turn ends: what it took, held as ending until `turnAcknowledged`. */
  endTurn(): Map<string, number> {
    this.ending = this.takeInflight();
    return this.ending;
  }

  /**
   * The turn's end was recorded and `acked` acknowledged. None of it when its report was lost:
   * what it took stays in flight, acknowledged with the next turn's input (as the cursor would
   * have anyway), and not by the agent's own messages meanwhile.
   */
  turnAcknowledged(acked: Map<string, number>): void {
    if (acked.size === 0 && this.ending)
      for (const [fdId, seq] of this.ending)
        this.inflight.set(fdId, Math.max(this.inflight.get(fdId) ?? 0, seq));
    this.ending = undefined;
    if (this.ownHeld.size > 0) this.releaseOwn();
  }

  /**
   * The agent's own message on one of its async fds: nothing to hand over, acknowledged at once
   * unless something before it there is still due, handed over in a turn not yet ended, or in
   * one whose end is being recorded. A cursor is one number: acknowledging the agent's reply
   * would drop a message that came mid-turn (before the reply) and the input of a turn that
   * may yet be cut off. Held, it is acknowledged once those are.
   */
  own(fdId: string, seq: number): void {
    if (this.clear(fdId, seq)) this.core.fdTable.ack(fdId, seq);
    else this.ownHeld.set(fdId, Math.max(this.ownHeld.get(fdId) ?? 0, seq));
  }

  private releaseOwn(): void {
    for (const [fdId, seq] of this.ownHeld) {
      if (!this.clear(fdId, seq)) continue;
      this.ownHeld.delete(fdId);
      this.core.fdTable.ack(fdId, seq);
    }
  }

  /** Nothing on the fd before `seq` is due, in flight or in a turn being recorded. */
  private clear(fdId: string, seq: number): boolean {
    if (this.inflight.has(fdId) || this.ending?.has(fdId)) return false;
    const past = this.core.fdTable.cursor(fdId);
    for (const { fd, event } of this.pending.values())
      if (fd.id === fdId && event.seq < seq && event.seq > past) return false;
    return true;
  }
}

/**
 * One SIGCHLD per child in an input: its latest state (a child that went idle twice between
 * two of its parent's turns is one line, not two). The others are taken all the same: their
 * cursors move with the batch.
 */
export function coalesce(messages: DeliveredMessage[]): DeliveredMessage[] {
  // Most inputs hold no SIGCHLD (a room's messages): every delivery pays only this scan.
  if (!messages.some((m) => childOf(m) !== undefined)) return messages;
  const seen = new Set<unknown>();
  const kept: DeliveredMessage[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as DeliveredMessage;
    const child = childOf(m);
    if (child !== undefined) {
      if (seen.has(child)) continue;
      seen.add(child);
    }
    kept.push(m);
  }
  return kept.reverse();
}

/** The child a SIGCHLD is about, else undefined. */
const childOf = (m: DeliveredMessage): unknown =>
  m.kind === 'signal' && m.signal === 'SIGCHLD'
    ? (m.data as { child?: unknown } | undefined)?.child
    : undefined;

function toDelivered(fd: FdsTable, e: LogEvent, core: Core): DeliveredMessage {
  const p = e.payload as { text?: string; kind?: 'message' | 'signal'; signal?: string; data?: unknown };
  return {
    seq: e.seq,
    fd: fd.num,
    stream: core.fdTable.stream(fd.stream_id)?.name ?? fd.stream_id,
    from: e.actor,
    text: p.text ?? '',
    kind: p.kind ?? 'message',
    ...(p.signal ? { signal: p.signal } : {}),
    ...(p.data !== undefined ? { data: p.data } : {}),
  };
}

export function toMessageView(e: LogEvent): MessageView {
  const p = e.payload as { text?: string; kind?: 'message' | 'signal'; signal?: string; data?: unknown };
  return {
    seq: e.seq,
    id: e.id,
    ts: e.ts,
    streamId: e.stream_id ?? '',
    from: e.actor,
    text: p.text ?? '',
    kind: p.kind ?? 'message',
    ...(p.signal ? { signal: p.signal } : {}),
    ...(p.data !== undefined ? { data: p.data } : {}),
  };
}
