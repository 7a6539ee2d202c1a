import type { EndReason, SessionStatus } from '../store/schema.ts';
import type { Db } from './lookup.ts';

/**
 * Where a session stands, as a plugin that follows sessions reads it (a task follows its
 * session): its status, how it ended, what it last said, whether it was asked to stop. Never
 * its spec, token or usage.
 */
export interface SessionState {
  id: string;
  zone: string;
  depth: number;
  status: SessionStatus;
  endReason: EndReason | null;
  endDetail: string | null;
  lastMessage: string | null;
  /** Set while a SIGTERM's grace runs (it was asked to stop). */
  termDeadline: number | null;
}

/** A live session as a plugin's backstop scans them: no text, only where it stands. */
export interface LiveSession {
  id: string;
  status: SessionStatus;
  /** It has a last message (its turn produced a result). */
  hasMessage: boolean;
  termDeadline: number | null;
}

const STATE_COLUMNS = [
  'id',
  'zone',
  'depth',
  'status',
  'end_reason',
  'end_detail',
  'last_message',
  'term_deadline',
] as const;

/** Rows read by key at a time (under both backends' caps on bound parameters). */
const BATCH = 500;

type StateRow = {
  id: string;
  zone: string;
  depth: number;
  status: SessionStatus;
  end_reason: EndReason | null;
  end_detail: string | null;
  last_message: string | null;
  term_deadline: number | null;
};

const stateOf = (r: StateRow): SessionState => ({
  id: r.id,
  zone: r.zone,
  depth: Number(r.depth),
  status: r.status,
  endReason: r.end_reason,
  endDetail: r.end_detail,
  lastMessage: r.last_message,
  termDeadline: r.term_deadline === null ? null : Number(r.term_deadline),
});

/** One session's state by id (inside a write unit pass its `db`: it sees the unit's own writes). */
export async function sessionState(db: Db, id: string): Promise<SessionState | undefined> {
  const row = await db.selectFrom('sessions').select(STATE_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? stateOf(row) : undefined;
}

/** The states of the sessions of `ids` that exist, by primary key, a batch at a time. */
export async function sessionStates(db: Db, ids: readonly string[]): Promise<SessionState[]> {
  const unique = [...new Set(ids)];
  const out: SessionState[] = [];
  for (let i = 0; i < unique.length; i += BATCH) {
    const rows = await db
      .selectFrom('sessions')
      .select(STATE_COLUMNS)
      .where('id', 'in', unique.slice(i, i + BATCH))
      .execute();
    for (const r of rows) out.push(stateOf(r));
  }
  return out;
}

/** Every live (not stopped) session of every zone: what costs the live set, never the history. */
export async function liveSessions(db: Db): Promise<LiveSession[]> {
  const rows = await db
    .selectFrom('sessions')
    .select(['id', 'status', 'term_deadline'])
    .select((eb) => eb('last_message', 'is not', null).as('has_message'))
    .where('status', '!=', 'stopped')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    hasMessage: Boolean(r.has_message),
    termDeadline: r.term_deadline === null ? null : Number(r.term_deadline),
  }));
}
