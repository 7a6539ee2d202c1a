import { type CursorOwner, flushCursors } from '../store/cursors.ts';
import type { LogEvent } from '../store/events.ts';
import type { FdsTable } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import type { Clock, TimerHandle } from '../util/clock.ts';
import { type Log, stderrLog } from '../util/log.ts';

export interface StreamMeta {
  name: string;
  selfEcho: boolean;
}

/**
 * The open fds, mirrored in memory from committed events, for fan-out on the hot path.
 * The database stays the truth for every decision made inside a transaction; this index
 * only answers "who is subscribed to this stream" after a message has committed.
 * It also owns the two positions of every fd: `delivered` (handed to the holder, in memory:
 * nothing is handed over twice in one life) and the cursor (acknowledged: the read returned,
 * or the agent's turn that took the input ended), which is flushed in the background. After
 * a crash everything past the cursor is due again: at-least-once, receivers drop repeats by seq.
 */
export class FdTable {
  private byId = new Map<string, FdsTable>();
  private byStream = new Map<string, Set<string>>();
  /** Open fds by holder: a pump's backlog asks for one holder's fds, never all of them. */
  private byHolder = new Map<string, Set<string>>();
  private streams = new Map<string, StreamMeta>();
  private dirty = new Set<string>();
  private delivered = new Map<string, number>();
  private timer: TimerHandle | undefined;
  private flushing: Promise<void> | undefined;
  /**
   * Who flushes, in a cluster (set by the kernel once its node role exists): the flush is
   * conditioned on it (cursors.ts). Undefined: alone, or a fenced node (epoch 0), which keeps
   * its cursors dirty until its lease is held again.
   */
  owner: () => CursorOwner | null | undefined = () => null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly flushMs: number,
    private readonly log: Log = stderrLog,
  ) {}

  async load(): Promise<void> {
    const rows = await this.store.reader
      .selectFrom('fds')
      .selectAll()
      .where('closed_at', 'is', null)
      .execute();
    // Rows as read are the table's own (put copies what comes from events): a restart with
    // 10,000 sessions loads 50,000 of them before it serves.
    for (const r of rows) {
      r.cursor = Number(r.cursor);
      this.put(r, true);
    }
    const streams = await this.store.reader
      .selectFrom('streams')
      .select(['id', 'name', 'self_echo'])
      .where('closed_at', 'is', null)
      .execute();
    for (const s of streams) this.streams.set(s.id, { name: s.name, selfEcho: s.self_echo === 1 });
  }

  /**
   * Take up the persisted cursors of one holder's fds (only ever forward): another node may
   * have acknowledged past what this one saw before the session came here (a takeover).
   */
  async refresh(holder: string): Promise<void> {
    const ids = this.byHolder.get(holder);
    if (!ids || ids.size === 0) return;
    const rows = await this.store.reader
      .selectFrom('fds')
      .select(['id', 'cursor'])
      .where('holder', '=', holder)
      .where('closed_at', 'is', null)
      .execute();
    for (const r of rows) {
      const row = this.byId.get(r.id);
      if (row && Number(r.cursor) > row.cursor) row.cursor = Number(r.cursor);
    }
  }

  stream(id: string): StreamMeta | undefined {
    return this.streams.get(id);
  }

  /** Follow fd changes in commit order. */
  apply(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.type === 'stream.created' && e.stream_id) {
        this.streams.set(e.stream_id, {
          name: e.payload.name as string,
          selfEcho: e.payload.selfEcho === true,
        });
      } else if (e.type === 'stream.closed' && e.stream_id) this.streams.delete(e.stream_id);
      else if (e.type === 'fd.opened') this.put(e.payload.row as FdsTable);
      else if (e.type === 'fd.closed') this.remove(e.payload.fdId as string);
      else if (e.type === 'fd.moved') {
        const row = this.byId.get(e.payload.fdId as string);
        if (row) {
          unindex(this.byHolder, row.holder, row.id);
          row.holder = e.payload.to as string;
          row.num = e.payload.num as number;
          index(this.byHolder, row.holder, row.id);
        }
      }
    }
  }

  get(fdId: string): FdsTable | undefined {
    return this.byId.get(fdId);
  }

  subscribers(streamId: string): FdsTable[] {
    return this.rowsOf(this.byStream.get(streamId));
  }

  heldBy(holder: string): FdsTable[] {
    return this.rowsOf(this.byHolder.get(holder));
  }

  private rowsOf(ids: Set<string> | undefined): FdsTable[] {
    if (!ids) return [];
    const out: FdsTable[] = [];
    for (const id of ids) {
      const r = this.byId.get(id);
      if (r) out.push(r);
    }
    return out;
  }

  /** How far the fd has been handed out: never behind its cursor. */
  cursor(fdId: string, persisted = 0): number {
    return Math.max(this.delivered.get(fdId) ?? 0, this.acked(fdId), persisted);
  }

  /** The acknowledged position (what survives a crash). */
  acked(fdId: string): number {
    return this.byId.get(fdId)?.cursor ?? 0;
  }

  /** Handed to the holder; not yet acknowledged. */
  advance(fdId: string, seq: number): void {
    if (!this.byId.has(fdId)) return;
    if (seq > (this.delivered.get(fdId) ?? 0)) this.delivered.set(fdId, seq);
  }

  /** Its holder's agent is gone: what was handed to it and not acknowledged is due again. */
  rewind(fdId: string): void {
    this.delivered.delete(fdId);
  }

  /** Acknowledged: persisted with the next flush. */
  ack(fdId: string, seq: number): void {
    const row = this.byId.get(fdId);
    if (!row || seq <= row.cursor) return;
    row.cursor = seq;
    this.advance(fdId, seq);
    this.dirty.add(fdId);
    if (!this.timer) this.timer = this.clock.setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Persist advanced cursors (one unit, one statement per fd). */
  async flush(): Promise<void> {
    if (this.timer) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.flushing) await this.flushing;
    if (this.dirty.size === 0) return;
    const owner = this.owner();
    if (owner === undefined) return; // fenced: nothing is written until the lease is held again
    const updates = [...this.dirty].map((id) => ({ id, cursor: this.byId.get(id)?.cursor ?? 0 }));
    this.dirty.clear();
    this.flushing = this.store.writer
      .write((tx) => flushCursors(tx, updates, owner))
      .catch((error) => {
        // Keep them dirty: the next flush tries again; delivery stays at-least-once.
        for (const u of updates) this.dirty.add(u.id);
        this.log.error({ err: error }, 'cursor flush failed');
      })
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  /** `own`: the row is this table's to keep (else a copy is kept: an event's payload is shared). */
  private put(row: FdsTable, own = false): void {
    const prev = this.byId.get(row.id);
    if (prev) unindex(this.byHolder, prev.holder, row.id);
    const cursor = Math.max(Number(row.cursor), prev?.cursor ?? 0);
    const kept = own ? row : { ...row };
    kept.cursor = cursor;
    this.byId.set(row.id, kept);
    index(this.byStream, row.stream_id, row.id);
    index(this.byHolder, row.holder, row.id);
  }

  private remove(fdId: string): void {
    const row = this.byId.get(fdId);
    if (!row) return;
    this.byId.delete(fdId);
    this.dirty.delete(fdId);
    this.delivered.delete(fdId);
    unindex(this.byStream, row.stream_id, fdId);
    unindex(this.byHolder, row.holder, fdId);
  }
}

function index(m: Map<string, Set<string>>, key: string, id: string): void {
  let set = m.get(key);
  if (!set) {
    set = new Set();
    m.set(key, set);
  }
  set.add(id);
}

function unindex(m: Map<string, Set<string>>, key: string, id: string): void {
  const set = m.get(key);
  set?.delete(id);
  if (set && set.size === 0) m.delete(key);
}
