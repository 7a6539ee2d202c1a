import type { FdsTable, SessionsTable, StreamsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { notFound, WarrenError } from './errors.ts';

/** Reads inside a write transaction: they see the batch's own uncommitted writes. */

export async function sessionRow(tx: WriteTx, id: string): Promise<SessionsTable> {
  const row = await tx.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('session', id);
  return row;
}

export async function liveSessionRow(tx: WriteTx, id: string): Promise<SessionsTable> {
  const row = await sessionRow(tx, id);
  if (row.status === 'stopped') {
    throw new WarrenError('session_stopped', `session ${id} has stopped (${row.end_reason})`, { id });
  }
  return row;
}

export async function streamRow(tx: WriteTx, id: string): Promise<StreamsTable> {
  const row = await tx.db.selectFrom('streams').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('stream', id);
  return row;
}

/** An open stream by id or, within the zone, by name. */
export async function openStreamByRef(tx: WriteTx, zone: string, ref: string): Promise<StreamsTable> {
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

export async function fdRow(tx: WriteTx, zone: string, holder: string, num: number): Promise<FdsTable> {
  const row = await tx.db
    .selectFrom('fds')
    .selectAll()
    .where('zone', '=', zone)
    .where('holder', '=', holder)
    .where('num', '=', num)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw notFound('fd', num);
  return row;
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

export async function nextFdNum(tx: WriteTx, zone: string, holder: string): Promise<number> {
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
