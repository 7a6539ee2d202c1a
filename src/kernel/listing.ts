import { type Expression, sql } from 'kysely';
import type { FdsTable } from '../store/schema.ts';
import { forbidden, invalid } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import type { KernelContext } from './context.ts';
import {
  canRead,
  type FdInfo,
  type SessionInfo,
  type StreamInfo,
  sessionInfo,
  streamInfo,
} from './records.ts';

/**
 * Listing fds, streams and sessions. A page costs a fixed number of queries whatever its size: the
 * rows, then every listed fd's pending count in one statement (one indexed count per fd
 * inside it), never one round trip per fd. Pages are bounded; `after` continues a page.
 */

export interface StreamListing extends StreamInfo {
  subscribers: FdInfo[];
  bufferDepth: number;
}

export interface PageOptions {
  /** At most this many rows (default 500, at most 5,000). */
  limit?: number;
  /** Continue after this key: the last fd number (fds) or stream id (streams) of the previous page. */
  after?: number | string;
}

export const DEFAULT_LIST_LIMIT = 500;
export const MAX_LIST_LIMIT = 5000;

const pageSize = (o: PageOptions) => Math.max(1, Math.min(MAX_LIST_LIMIT, o.limit ?? DEFAULT_LIST_LIMIT));

type Listed = FdsTable & { stream_name: string; stream_self_echo: number };

export async function listFds(
  k: KernelContext,
  p: Principal,
  holder = principalId(p),
  page: PageOptions = {},
): Promise<FdInfo[]> {
  if (p.kind === 'session' && holder !== p.sessionId) throw forbidden('a session can only list its own fds');
  let q = k.store.reader
    .selectFrom('fds')
    .innerJoin('streams', 'streams.id', 'fds.stream_id')
    .selectAll('fds')
    .select(['streams.name as stream_name', 'streams.self_echo as stream_self_echo'])
    .where('fds.zone', '=', p.zone)
    .where('fds.holder', '=', holder)
    .where('fds.closed_at', 'is', null);
  if (typeof page.after === 'number') q = q.where('fds.num', '>', page.after);
  else if (typeof page.after === 'string') {
    // A cursor that is an fd's id (what the syscall hands out as `next`): after its number.
    const at = await k.store.reader
      .selectFrom('fds')
      .select('num')
      .where('id', '=', page.after)
      .where('holder', '=', holder)
      .executeTakeFirst();
    if (!at) throw invalid(`after: ${page.after} names no fd of ${holder}`);
    q = q.where('fds.num', '>', at.num);
  }
  const rows = await q.orderBy('fds.num', 'asc').limit(pageSize(page)).execute();
  return withPending(k, rows);
}

export async function listStreams(
  k: KernelContext,
  p: Principal,
  opts: { internal?: boolean } & PageOptions = {},
): Promise<StreamListing[]> {
  let q = k.store.reader
    .selectFrom('streams')
    .selectAll()
    .where('zone', '=', p.zone)
    .where('closed_at', 'is', null);
  if (!opts.internal) q = q.where('kind', '=', 'named');
  if (p.kind === 'session') {
    q = q.where('id', 'in', (eb) =>
      eb
        .selectFrom('fds')
        .select('stream_id')
        .where('holder', '=', p.sessionId)
        .where('closed_at', 'is', null),
    );
  }
  if (typeof opts.after === 'string') q = q.where('id', '>', opts.after);
  // Stream ids are ULIDs: id order is creation order, and a unique key to page on.
  const streams = await q.orderBy('id', 'asc').limit(pageSize(opts)).execute();
  if (streams.length === 0) return [];
  const fds = await k.store.reader
    .selectFrom('fds')
    .selectAll()
    .where(
      'stream_id',
      'in',
      streams.map((s) => s.id),
    )
    .where('closed_at', 'is', null)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  const byId = new Map(streams.map((s) => [s.id, s]));
  const subscribers = await withPending(
    k,
    fds.map((f) => {
      const s = byId.get(f.stream_id);
      return { ...f, stream_name: s?.name ?? f.stream_id, stream_self_echo: s?.self_echo ?? 0 };
    }),
  );
  const of = new Map<string, FdInfo[]>();
  for (const f of subscribers) of.set(f.streamId, [...(of.get(f.streamId) ?? []), f]);
  return streams.map((s) => {
    const subs = of.get(s.id) ?? [];
    return {
      ...streamInfo(s),
      subscribers: subs,
      bufferDepth: subs.reduce((m, f) => Math.max(m, f.pending), 0),
    };
  });
}

/** Chunks keep a statement's parameters well under both backends' limits. */
const COUNT_CHUNK = 500;

async function withPending(k: KernelContext, rows: Listed[]): Promise<FdInfo[]> {
  const pending = new Map<string, number>();
  const readable = rows.filter((r) => canRead(r.perm));
  for (let i = 0; i < readable.length; i += COUNT_CHUNK) {
    for (const [id, n] of await countPending(k, readable.slice(i, i + COUNT_CHUNK))) pending.set(id, n);
  }
  return rows.map((r) => ({
    fd: r.num,
    id: r.id,
    holder: r.holder,
    streamId: r.stream_id,
    streamName: r.stream_name,
    permission: r.perm,
    deliveryMode: r.mode,
    cursor: k.fdTable.cursor(r.id, Number(r.cursor)),
    owned: r.owned === 1,
    spawned: r.spawned === 1,
    pending: pending.get(r.id) ?? 0,
  }));
}

/**
 * Messages due on each fd, in one statement: past the fd's cursor (the in-memory one where it
 * runs ahead of the table's, bound per fd), not its own on a stream without self-echo.
 * Each count walks `events_stream_type_seq` from the cursor: it costs what is pending.
 */
async function countPending(k: KernelContext, rows: Listed[]): Promise<Map<string, number>> {
  const ahead: Array<[string, number]> = [];
  for (const r of rows) {
    const c = k.fdTable.cursor(r.id, Number(r.cursor));
    if (c > Number(r.cursor)) ahead.push([r.id, c]);
  }
  const cursor: Expression<number> =
    ahead.length === 0
      ? sql<number>`f.cursor`
      : sql<number>`case f.id ${sql.join(
          ahead.map(([id, c]) => sql`when ${id} then ${c}`),
          sql` `,
        )} else f.cursor end`;
  const out = await k.store.reader
    .selectFrom('fds as f')
    .innerJoin('streams as s', 's.id', 'f.stream_id')
    .select((eb) => [
      'f.id',
      eb
        .selectFrom('events as e')
        .select(sql<number>`count(*)`.as('n'))
        .whereRef('e.stream_id', '=', 'f.stream_id')
        .where('e.type', '=', 'stream.message')
        .where('e.seq', '>', cursor)
        .where((w) => w.or([w('s.self_echo', '=', 1), w('e.actor', '!=', w.ref('f.holder'))]))
        .as('n'),
    ])
    .where(
      'f.id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  return new Map(out.map((r) => [r.id, Number(r.n ?? 0)]));
}

/**
 * The half-open range of strings that start with `prefix`: `[prefix, successor)`. A range,
 * not `like`, because both backends walk a btree on it (PostgreSQL uses no index for `like`
 * outside the C collation); callers still check `startsWith` where a collation could differ.
 */
export function prefixRange(prefix: string): { from: string; to: string | null } {
  const last = prefix.charCodeAt(prefix.length - 1);
  if (prefix === '' || last >= 0xffff) return { from: prefix, to: null };
  return { from: prefix, to: prefix.slice(0, -1) + String.fromCharCode(last + 1) };
}

/**
 * Sessions the caller may read, in id (creation) order: an operator, its zone; a session,
 * itself and its descendants (the read matrix of access.ts). Paged on `after` (the last id
 * of the previous page), optionally only ids starting with `prefix`. Each page is one
 * indexed query: the zone's ids, or the caller's subtree walked down `sessions_parent`.
 */
export async function listSessions(
  k: KernelContext,
  p: Principal,
  opts: { after?: string; prefix?: string } & Omit<PageOptions, 'after'> = {},
): Promise<SessionInfo[]> {
  let q = k.store.reader.selectFrom('sessions').selectAll().where('zone', '=', p.zone);
  if (p.kind === 'session') {
    q = q.where(
      sql<boolean>`id in (with recursive tree(id) as (select id from sessions where id = ${p.sessionId} union all select s.id from sessions s join tree t on s.parent_id = t.id) select id from tree)`,
    );
  }
  if (opts.after !== undefined) q = q.where('id', '>', opts.after);
  if (opts.prefix) {
    const { from, to } = prefixRange(opts.prefix);
    q = q.where('id', '>=', from);
    if (to !== null) q = q.where('id', '<', to);
  }
  const rows = await q.orderBy('id', 'asc').limit(pageSize(opts)).execute();
  return rows.filter((r) => !opts.prefix || r.id.startsWith(opts.prefix)).map(sessionInfo);
}

/**
 * Names of the open streams the caller may list (an operator: its zone's; a session: those
 * it holds an open fd on), plumbing included, in name order, optionally by prefix. One query
 * on `streams_zone_name_open` (operators) or the caller's fds (sessions).
 */
export async function streamNames(
  k: KernelContext,
  p: Principal,
  opts: { prefix?: string; limit?: number } = {},
): Promise<string[]> {
  let q = k.store.reader
    .selectFrom('streams')
    .select('name')
    .where('zone', '=', p.zone)
    .where('closed_at', 'is', null);
  if (p.kind === 'session') {
    q = q.where('id', 'in', (eb) =>
      eb
        .selectFrom('fds')
        .select('stream_id')
        .where('holder', '=', p.sessionId)
        .where('closed_at', 'is', null),
    );
  }
  if (opts.prefix) {
    const { from, to } = prefixRange(opts.prefix);
    q = q.where('name', '>=', from);
    if (to !== null) q = q.where('name', '<', to);
  }
  const rows = await q.orderBy('name', 'asc').limit(pageSize(opts)).execute();
  return rows.map((r) => r.name).filter((n) => !opts.prefix || n.startsWith(opts.prefix));
}
