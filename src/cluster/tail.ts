import type { LogEvent } from '../store/events.ts';
import type { Notice } from '../store/notice.ts';
import type { Store } from '../store/store.ts';
import type { Clock, TimerHandle } from '../util/clock.ts';
import type { Log } from '../util/log.ts';

/** Events read per query while catching up. */
const PAGE = 1000;

/**
 * The ordered feed of a node in a cluster: every node's commits, this node's included, handed
 * to the fan-out (`writer.publishOrdered`: the fd index, delivery, waits, SSE, MCP
 * subscriptions) strictly in seq order with no gap. Delivery and live streams rely on that
 * order (a cursor past 12 means 11 was seen): a commit of this node must not overtake an
 * earlier commit of another that this node has not read yet.
 *
 * This node's commits are held in memory as they commit and passed on at once when nothing
 * is missing before them (the usual case: no query, no delay). So are other nodes' commits
 * whose NOTIFY carried their events (store/notice.ts): passed on from memory when they follow
 * the cursor. Anything else is read from the log past the cursor: a notification is only a
 * wake-up and a shortcut, so a lost one delays nothing beyond the next poll. On PostgreSQL
 * seq order is commit order (the `log_head` row lock), so reading past a cursor never skips a
 * commit.
 */
export class CommitTail {
  /** Every event up to here has been fanned out on this node. */
  private cursor = 0;
  /**
   * Commits past the cursor known from memory, not yet passed on (something before them is
   * unread): this node's as they committed, other nodes' (`remote`) from their notices.
   */
  private readonly held = new Map<number, { event: LogEvent; remote: boolean }>();
  private running: Promise<void> | undefined;
  private again = false;
  private timer: TimerHandle | undefined;
  private stopped = true;
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly pollMs: number,
    private readonly log: Log,
  ) {}

  /**
   * Take over the fan-out, from the current head: before the kernel loads its fd index, so
   * nothing committed in between is missed (what is seen twice is applied idempotently).
   */
  async prime(): Promise<void> {
    this.unlisten ??= this.store.writer.onCommit((events) => this.committedHere(events));
    this.cursor = await this.store.log.head();
    this.store.writer.orderedFanOut = true;
  }

  /** Start reading other nodes' commits: once the kernel listens. */
  start(): void {
    this.stopped = false;
    this.schedule();
    this.kick();
  }

  /** Stop reading and give the fan-out back to the commit path; waits for a read in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    this.unlisten?.();
    this.unlisten = undefined;
    this.store.writer.orderedFanOut = false;
  }

  /**
   * A notification: `seq` was committed somewhere. This node's own notices are skipped (its
   * commit path hands those over); another node's events, when the notice carries them, are
   * passed on from memory if nothing is missing before them, else the log is read.
   */
  notified(notice: Notice): void {
    // Not primed (or stopped): there is no cursor to follow yet.
    if (!this.unlisten || notice.seq <= this.cursor) return;
    const self = this.store.writer.notify?.node;
    if (self !== undefined && notice.node === self) return;
    for (const e of notice.events ?? [])
      if (e.seq > this.cursor) this.held.set(e.seq, { event: e, remote: true });
    this.passHeld();
    if (notice.seq > this.cursor) this.kick();
  }

  /** Read whatever is past the cursor now (a notification came, the poll fired, a reconnect). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.catchUp()
      .catch((error) => this.log.warn({ err: error }, 'reading other nodes’ commits failed; retrying'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** This node committed: pass it on now if nothing is missing before it, else after the read. */
  private committedHere(events: readonly LogEvent[]): void {
    // Ours, even if another node's notice said otherwise (it cannot: it names its node).
    for (const e of events) if (e.seq > this.cursor) this.held.set(e.seq, { event: e, remote: false });
    this.passHeld();
    if (this.held.size > 0) this.kick();
  }

  /** Commits known from memory right past the cursor: handed on without a read. */
  private passHeld(): void {
    const out: LogEvent[] = [];
    const remote: LogEvent[] = [];
    for (let h = this.held.get(this.cursor + 1); h; h = this.held.get(this.cursor + 1)) {
      this.held.delete(h.event.seq);
      this.cursor = h.event.seq;
      out.push(h.event);
      if (h.remote) remote.push(h.event);
    }
    this.store.writer.publishOrdered(out, remote);
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      this.passHeld();
      const page = await this.store.log.tail(this.cursor, { limit: PAGE });
      // Passed on from memory while the query ran.
      const fresh = page.filter((e) => e.seq > this.cursor);
      if (fresh.length === 0) return;
      const all: LogEvent[] = [];
      const remote: LogEvent[] = [];
      for (const e of fresh) {
        const known = this.held.get(e.seq);
        if (known) this.held.delete(e.seq);
        const event = known?.event ?? e;
        all.push(event);
        if (!known || known.remote) remote.push(event);
      }
      this.cursor = fresh[fresh.length - 1]!.seq;
      // Anything held below the new cursor went by already (a gap left by retention).
      for (const seq of this.held.keys()) if (seq <= this.cursor) this.held.delete(seq);
      this.store.writer.publishOrdered(all, remote);
      if (page.length < PAGE) {
        this.passHeld();
        return;
      }
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      this.kick();
      this.schedule();
    }, this.pollMs);
  }
}
