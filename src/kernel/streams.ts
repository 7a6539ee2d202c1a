import { sql } from 'kysely';
import type { DeliveryMode, FdsTable, Permission, StreamKind, StreamsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import type { IdGenerator } from '../util/ids.ts';
import { WarrenError } from '../vocab/errors.ts';
import type { FdTable } from './fdtable.ts';
import { nextFdNum } from './lookup.ts';
import { canRead } from './records.ts';

/** Stream and fd primitives. None of them cascades: lifecycle.ts decides what a close means. */

export async function createStream(
  tx: WriteTx,
  ids: IdGenerator,
  s: {
    zone: string;
    name: string;
    kind: StreamKind;
    owner: string;
    sessionId?: string;
    selfEcho?: boolean;
    actor: string;
  },
): Promise<StreamsTable> {
  const row: StreamsTable = {
    id: ids.stream(),
    zone: s.zone,
    name: s.name,
    kind: s.kind,
    owner: s.owner,
    session_id: s.sessionId ?? null,
    self_echo: s.selfEcho ? 1 : 0,
    created_at: tx.now,
    closed_at: null,
  };
  const taken = await tx.db
    .selectFrom('streams')
    .select('id')
    .where('zone', '=', s.zone)
    .where('name', '=', s.name)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  if (taken)
    throw new WarrenError('name_taken', `a stream named ${JSON.stringify(s.name)} already exists`, {
      name: s.name,
    });
  await tx.db.insertInto('streams').values(row).execute();
  tx.append({
    zone: s.zone,
    type: 'stream.created',
    actor: s.actor,
    stream_id: row.id,
    session_id: s.sessionId ?? null,
    payload: { name: row.name, kind: row.kind, owner: row.owner, selfEcho: row.self_echo === 1 },
  });
  return row;
}

export async function openFd(
  tx: WriteTx,
  ids: IdGenerator,
  f: {
    zone: string;
    holder: string;
    stream: StreamsTable;
    perm: Permission;
    mode: DeliveryMode;
    owned?: boolean;
    spawned?: boolean;
    num?: number;
    /** Where the cursor starts: by default, at the head (only new messages are due). */
    cursor?: number;
    actor: string;
  },
): Promise<FdsTable> {
  if (f.perm === 'w' && f.mode !== 'detach') {
    throw new WarrenError('invalid_input', 'a write-only (w) fd must use deliveryMode "detach"');
  }
  const cursor = f.cursor ?? (await headSeq(tx));
  const row: FdsTable = {
    id: ids.fd(),
    zone: f.zone,
    holder: f.holder,
    num: f.num ?? (await nextFdNum(tx, f.zone, f.holder)),
    stream_id: f.stream.id,
    perm: f.perm,
    mode: f.mode,
    cursor,
    owned: f.owned ? 1 : 0,
    spawned: f.spawned ? 1 : 0,
    created_at: tx.now,
    closed_at: null,
  };
  await tx.db.insertInto('fds').values(row).execute();
  tx.append({
    zone: f.zone,
    type: 'fd.opened',
    actor: f.actor,
    stream_id: f.stream.id,
    session_id: f.holder.startsWith('operator:') ? null : f.holder,
    payload: { row, streamName: f.stream.name },
  });
  return row;
}

export async function closeFdRow(
  tx: WriteTx,
  fd: FdsTable,
  how: { actor: string; reason: string; forced?: boolean; undelivered?: number },
): Promise<void> {
  await tx.db.updateTable('fds').set({ closed_at: tx.now }).where('id', '=', fd.id).execute();
  tx.append({
    zone: fd.zone,
    type: 'fd.closed',
    actor: how.actor,
    stream_id: fd.stream_id,
    session_id: fd.holder.startsWith('operator:') ? null : fd.holder,
    payload: {
      fdId: fd.id,
      fd: fd.num,
      holder: fd.holder,
      reason: how.reason,
      ...(how.forced ? { forced: true, undelivered: how.undelivered ?? 0 } : {}),
    },
  });
}

export async function closeStreamRow(
  tx: WriteTx,
  stream: StreamsTable,
  actor: string,
  reason: string,
): Promise<void> {
  if (stream.closed_at !== null) return;
  await tx.db.updateTable('streams').set({ closed_at: tx.now }).where('id', '=', stream.id).execute();
  tx.append({
    zone: stream.zone,
    type: 'stream.closed',
    actor,
    stream_id: stream.id,
    session_id: stream.session_id,
    payload: { name: stream.name, reason },
  });
}

export interface MessageInput {
  text: string;
  kind?: 'message' | 'signal';
  signal?: string;
  data?: unknown;
}

/** Append a message to a stream. The log is written before anything is delivered. */
export function postMessage(
  tx: WriteTx,
  stream: StreamsTable,
  actor: string,
  msg: MessageInput,
  sessionId: string | null = actor.startsWith('operator:') || actor === 'kernel' ? null : actor,
) {
  return tx.append({
    zone: stream.zone,
    type: 'stream.message',
    actor,
    stream_id: stream.id,
    session_id: sessionId,
    payload: {
      text: msg.text,
      kind: msg.kind ?? 'message',
      ...(msg.signal ? { signal: msg.signal } : {}),
      ...(msg.data !== undefined ? { data: msg.data } : {}),
    },
  });
}

export async function headSeq(tx: WriteTx): Promise<number> {
  const row = await tx.db.selectFrom('log_head').select('seq').where('id', '=', 1).executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/**
 * How many messages on the fd's stream are still due to its holder: past its cursor
 * (the in-memory one, which runs ahead of the table), and not its own on a stream without self-echo.
 */
export async function undelivered(
  db: WriteTx['db'],
  fdTable: FdTable,
  fd: FdsTable,
  selfEcho: boolean,
): Promise<number> {
  if (!canRead(fd.perm)) return 0;
  const cursor = fdTable.cursor(fd.id, Number(fd.cursor));
  let q = db
    .selectFrom('events')
    .select(sql<number>`count(*)`.as('n'))
    .where('stream_id', '=', fd.stream_id)
    .where('type', '=', 'stream.message')
    .where('seq', '>', cursor);
  if (!selfEcho) q = q.where('actor', '!=', fd.holder);
  const row = await q.executeTakeFirst();
  return Number(row?.n ?? 0);
}
