import type { LogEvent } from '../store/events.ts';
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
 * is missing before them (the usual case: no query, no delay). Other nodes' commits are read
 * from the log past the cursor; a NOTIFY carrying the new head seq is only a wake-up, so a
 * lost notification delays nothing beyond the next poll. On PostgreSQL seq order is commit
 * order (the `log_head` row lock), so reading past a cursor never skips a commit.
 */
export class CommitTail {
  /** Every event up to here has been fanned out on this node. */
  private cursor = 0;
  /** This node's commits past the cursor, not yet passed on (something before them is unread). */
  private readonly local = new Map<number, LogEvent>();
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

  /** A notification: `seq` was committed somewhere. */
  notified(seq: number): void {
    if (seq > this.cursor) this.kick();
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
    for (const e of events) if (e.seq > this.cursor) this.local.set(e.seq, e);
    this.passLocal();
    if (this.local.size > 0) this.kick();
  }

  /** This node's own commits right past the cursor: handed on from memory. */
  private passLocal(): void {
    const out: LogEvent[] = [];
    for (let e = this.local.get(this.cursor + 1); e; e = this.local.get(this.cursor + 1)) {
      this.local.delete(e.seq);
      this.cursor = e.seq;
      out.push(e);
    }
    this.store.writer.publishOrdered(out, []);
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      this.passLocal();
      const page = await this.store.log.tail(this.cursor, { limit: PAGE });
      // Passed on from memory while the query ran.
      const fresh = page.filter((e) => e.seq > this.cursor);
      if (fresh.length === 0) return;
      const all: LogEvent[] = [];
      const remote: LogEvent[] = [];
      for (const e of fresh) {
        const mine = this.local.get(e.seq);
        if (mine) {
          this.local.delete(e.seq);
          all.push(mine);
        } else {
          all.push(e);
          remote.push(e);
        }
      }
      this.cursor = fresh[fresh.length - 1]!.seq;
      // Anything of ours below the new cursor went by already (a gap left by retention).
      for (const seq of this.local.keys()) if (seq <= this.cursor) this.local.delete(seq);
      this.store.writer.publishOrdered(all, remote);
      if (page.length < PAGE) {
        this.passLocal();
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
