import { sql } from 'kysely';
import type { FdsTable, SessionsTable, StreamsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { forbidden, invalid, notFound, WarrenError } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import { isReservedName } from './records.ts';
import { isInit } from './zones.ts';

/**
 * Every read of a row by its key, in one place. Inside a write unit pass `tx.db` (it sees the
 * batch's own uncommitted writes); outside one, the store's reader.
 */
export type Db = WriteTx['db'];

/** The one query that reads a session by id. */
export function sessionById(db: Db, id: string): Promise<SessionsTable | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

const SESSION_BY_ID_SQL = 'select * from sessions where id = ?';

/**
 * The same read inside a write unit, as a prepared statement (`tx.first`): the turn path
 * (reports, status changes, SIGCHLD) reads a session row per turn, and the query builder's
 * per-query cost was most of that read's.
 */
export function sessionIn(tx: WriteTx, id: string): Promise<SessionsTable | undefined> {
  return tx.first<SessionsTable>(SESSION_BY_ID_SQL, [id]);
}

const SESSION_LOCKED_SQL = 'select * from sessions where id = ? for no key update';

/**
 * The same read, holding the row until the unit commits (PostgreSQL): what is decided on its
 * owner and epoch (an agent's report) stays true when the unit commits, because a takeover's
 * update of the row waits for it, or is seen by it (docs/scaling.md). SQLite has one writer.
 */
export function lockedSessionIn(tx: WriteTx, id: string): Promise<SessionsTable | undefined> {
  return tx.kind === 'postgres' ? tx.first<SessionsTable>(SESSION_LOCKED_SQL, [id]) : sessionIn(tx, id);
}

export async function sessionRow(tx: WriteTx | { db: Db }, id: string): Promise<SessionsTable> {
  const row = await sessionById(tx.db, id);
  if (!row) throw notFound('session', id);
  return row;
}

export const stoppedError = (row: SessionsTable) =>
  new WarrenError('session_stopped', `session ${row.id} has stopped (${row.end_reason})`, { id: row.id });

export async function liveSessionRow(tx: WriteTx | { db: Db }, id: string): Promise<SessionsTable> {
  const row = await sessionRow(tx, id);
  if (row.status === 'stopped') throw stoppedError(row);
  return row;
}

/** A session in the caller's zone (other zones' sessions do not exist for it). */
export async function sessionInZone(db: Db, p: Principal, id: string): Promise<SessionsTable> {
  const row = await sessionById(db, id);
  if (!row || row.zone !== p.zone) throw notFound('session', id);
  return row;
}

/** Operators control any session in their zone; a session controls itself and its descendants. */
export async function controllable(db: Db, p: Principal, id: string): Promise<SessionsTable> {
  const row = await sessionInZone(db, p, id);
  if (isInit(id)) throw forbidden('init cannot be signalled');
  if (p.kind === 'operator') return row;
  let cur: SessionsTable | undefined = row;
  while (cur) {
    if (cur.id === p.sessionId) return row;
    if (!cur.parent_id) break;
    cur = await sessionById(db, cur.parent_id);
  }
  throw forbidden(`${id} is not ${p.sessionId} or one of its descendants`);
}

/** A session and everything below it, breadth first. */
export async function subtree(db: Db, id: string): Promise<SessionsTable[]> {
  const out: SessionsTable[] = [];
  let frontier = [id];
  while (frontier.length > 0) {
    const rows = await db.selectFrom('sessions').selectAll().where('id', 'in', frontier).execute();
    out.push(...rows);
    const kids = await db.selectFrom('sessions').select('id').where('parent_id', 'in', frontier).execute();
    frontier = kids.map((k) => k.id);
  }
  return out;
}

/** An open stream by id or, within the zone, by name. */
export async function openStreamByRef(
  tx: WriteTx | { db: Db },
  zone: string,
  ref: string,
): Promise<StreamsTable> {
  const row = await tx.db
    .selectFrom('streams')
    .selectAll()
    .where('zone', '=', zone)
    .where('closed_at', 'is', null)
    .where((eb) => eb.or([eb('id', '=', ref), eb('name', '=', ref)]))
    .executeTakeFirst();
  if (!row) throw notFound('stream', ref);
  return row;
}

/** An open, operator-addressable stream: named, never reserved plumbing. */
export async function namedStream(
  tx: WriteTx | { db: Db },
  zone: string,
  ref: string,
): Promise<StreamsTable> {
  if (isReservedName(ref)) throw new WarrenError('reserved_name', `${ref} is reserved plumbing`);
  const stream = await openStreamByRef(tx, zone, ref);
  if (stream.kind !== 'named') throw new WarrenError('reserved_name', `${stream.name} is reserved plumbing`);
  return stream;
}

export async function fdRow(
  tx: WriteTx | { db: Db },
  zone: string,
  holder: string,
  num: number,
): Promise<FdsTable> {
  const row = await tx.db
    .selectFrom('fds')
    .selectAll()
    .where('zone', '=', zone)
    .where('holder', '=', holder)
    .where('num', '=', num)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw (await closedFdError(tx.db, zone, holder, num)) ?? notFound('fd', num);
  return row;
}

/**
 * The holder's latest fd of that number, if it was closed: `fd_closed`, saying why (a kill of
 * the session behind it closes its operators' fds). Undefined when there never was one.
 */
export async function closedFdError(db: Db, zone: string, holder: string, num: number) {
  const closed = await closedFd(db, zone, holder, num);
  if (!closed) return undefined;
  return new WarrenError('fd_closed', `fd ${num} is closed${closed.why ? ` (${closed.why})` : ''}`, {
    fd: num,
    ...(closed.why ? { reason: closed.why } : {}),
  });
}

/** The holder's latest closed fd of that number, and why it was closed (from the log). */
export async function closedFd(
  db: Db,
  zone: string,
  holder: string,
  num: number,
): Promise<{ id: string; why: string | null } | undefined> {
  const row = await db
    .selectFrom('fds')
    .select(['id'])
    .where('zone', '=', zone)
    .where('holder', '=', holder)
    .where('num', '=', num)
    .where('closed_at', 'is not', null)
    .orderBy('closed_at', 'desc')
    .executeTakeFirst();
  if (!row) return undefined;
  const ev = await db
    .selectFrom('events')
    .select('payload')
    .where('type', '=', 'fd.closed')
    .where('stream_id', 'in', db.selectFrom('fds').select('stream_id').where('id', '=', row.id))
    .orderBy('seq', 'desc')
    .limit(20)
    .execute();
  for (const e of ev) {
    const p = (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload) as {
      fdId?: string;
      reason?: string;
    };
    if (p.fdId === row.id) return { id: row.id, why: p.reason ?? null };
  }
  return { id: row.id, why: null };
}

const FD_COLUMNS = [
  'id',
  'zone',
  'holder',
  'num',
  'stream_id',
  'perm',
  'mode',
  'cursor',
  'owned',
  'spawned',
  'created_at',
  'closed_at',
] as const;
const STREAM_COLUMNS = [
  'id',
  'zone',
  'name',
  'kind',
  'owner',
  'session_id',
  'self_echo',
  'created_at',
  'closed_at',
] as const;

/**
 * The fd, its stream and the caller's status in one statement (a message write's only
 * read): columns as `f_<col>`, `s_<col>`, then `me_status` (null for an operator).
 */
const FD_AND_STREAM_SQL = `select ${FD_COLUMNS.map((c) => `f.${c} as f_${c}`).join(', ')}, ${STREAM_COLUMNS.map((c) => `s.${c} as s_${c}`).join(', ')}, me.status as me_status
from fds f join streams s on s.id = f.stream_id left join sessions me on me.id = ?
where f.zone = ? and f.holder = ? and f.num = ? and f.closed_at is null`;

type Prefixed<P extends string, T> = { [K in keyof T as `${P}${K & string}`]: T[K] };
type FdAndStreamRow = Prefixed<'f_', FdsTable> & Prefixed<'s_', StreamsTable> & { me_status: string | null };

function unprefix<T>(row: Record<string, unknown>, prefix: string, columns: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c] = row[prefix + c];
  return out as T;
}

/** The caller's open fd and the stream behind it, read in the write unit that acts on them. */
export async function fdAndStream(
  tx: WriteTx,
  p: Principal,
  fd: number,
  opts: { reservedOk?: boolean } = {},
) {
  const holder = principalId(p);
  const joined = await tx.first<FdAndStreamRow>(FD_AND_STREAM_SQL, [
    p.kind === 'session' ? p.sessionId : null,
    p.zone,
    holder,
    fd,
  ]);
  // Anything but a live caller's open fd: the reads one by one, for the precise error.
  if (!joined || (p.kind === 'session' && (joined.me_status === null || joined.me_status === 'stopped'))) {
    if (p.kind === 'session') await liveSessionRow(tx, p.sessionId);
    await fdRow(tx, p.zone, holder, fd);
    if (!joined) throw notFound('fd', fd);
  }
  const row = unprefix<FdsTable>(joined as Record<string, unknown>, 'f_', FD_COLUMNS);
  const stream = unprefix<StreamsTable>(joined as Record<string, unknown>, 's_', STREAM_COLUMNS);
  if (stream.closed_at !== null && !opts.reservedOk)
    throw new WarrenError('conflict', `the stream behind fd ${fd} is closed`);
  return { row, stream };
}

/** The child behind an fd (its lifecycle or pipe) or a session id the caller controls. */
export async function childOf(db: Db, p: Principal, ref: { fd?: number; session?: string }): Promise<string> {
  if (ref.fd !== undefined) {
    const row = await db
      .selectFrom('fds')
      .innerJoin('streams', 'streams.id', 'fds.stream_id')
      .select(['streams.session_id', 'streams.kind'])
      .where('fds.zone', '=', p.zone)
      .where('fds.holder', '=', principalId(p))
      .where('fds.num', '=', ref.fd)
      .where('fds.closed_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('fd', ref.fd);
    if (!row.session_id || (row.kind !== 'lifecycle' && row.kind !== 'pipe')) {
      throw invalid(`fd ${ref.fd} is not a pipe or lifecycle fd of a child`);
    }
    return row.session_id;
  }
  if (!ref.session) throw invalid('give fd or session');
  await controllable(db, p, ref.session);
  return ref.session;
}

export async function openFdsOf(tx: WriteTx, holder: string): Promise<FdsTable[]> {
  return tx.db
    .selectFrom('fds')
    .selectAll()
    .where('holder', '=', holder)
    .where('closed_at', 'is', null)
    .execute();
}

export async function openFdsOn(tx: WriteTx, streamId: string): Promise<FdsTable[]> {
  return tx.db
    .selectFrom('fds')
    .selectAll()
    .where('stream_id', '=', streamId)
    .where('closed_at', 'is', null)
    .execute();
}

/** A holder's open fds on one stream (usually none or one). */
export async function openFdsOfOn(tx: WriteTx, holder: string, streamId: string): Promise<FdsTable[]> {
  return tx.db
    .selectFrom('fds')
    .selectAll()
    .where('holder', '=', holder)
    .where('stream_id', '=', streamId)
    .where('closed_at', 'is', null)
    .execute();
}

export async function nextFdNum(tx: WriteTx, zone: string, holder: string): Promise<number> {
  // Several nodes on one PostgreSQL: two transactions would both read the same highest
  // number. One lock for every allocation (per schema, until commit) makes the second read
  // after the first committed; one key, so two batches never wait on each other's in turn.
  if (tx.kind === 'postgres')
    await sql`select pg_advisory_xact_lock(hashtext('warren:fd-num:' || current_schema()))`.execute(tx.db);
  const row = await tx.db
    .selectFrom('fds')
    .select((eb) => eb.fn.max('num').as('max'))
    .where('zone', '=', zone)
    .where('holder', '=', holder)
    .executeTakeFirst();
  const max = row?.max === null || row?.max === undefined ? -1 : Number(row.max);
  // 0, 1, 2 are a session's own stdin, pipe and lifecycle; everything else starts at 3.
  return Math.max(3, max + 1);
}
