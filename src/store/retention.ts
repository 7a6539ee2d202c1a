import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { WriteTx } from './writer.ts';

/**
 * Events deleted per call at most. Deleting costs ~0.05–0.1 ms a row on SQLite (the row and
 * its five index entries), on the event loop: 500 keeps one unit to tens of milliseconds.
 */
export const RETENTION_BATCH = 500;
/** Calls per reconcile tick: up to 10 000 events every tick (1 000/s at the 10 s default). */
export const RETENTION_UNITS_PER_TICK = 20;

export interface RetentionResult {
  deleted: number;
  /** The highest seq deleted (0 if none). */
  upToSeq: number;
}

/**
 * The newest seq written before `cutoff`, found on the `ts` index (one probe). Everything
 * that can expire lies at or below it.
 */
const lastExpiredQuery = (db: Kysely<Database>, cutoff: number) =>
  db.selectFrom('events').select('seq').where('ts', '<', cutoff).orderBy('ts', 'desc').limit(1);

/**
 * Walks the log from its oldest row in seq order (the primary key), below `upTo`, and
 * deletes up to `limit` expired rows. A stream message stays while an open fd on its stream
 * has not been given it (`cursor < seq`): the fd lookup is one probe of `fds_stream`.
 * `+ts` keeps the planner on the seq range instead of sorting a `ts` index range.
 * The cost is the rows still owed to a reader plus `limit`, never the size of the log.
 */
const victimsSql = (pg: boolean) => {
  const p = pg ? (i: number) => `$${i}` : () => '?';
  // PostgreSQL joins a plain `in (subquery)` back to events with a hash over a full scan;
  // `= any(array(subquery))` computes the seqs once and deletes by primary key.
  const open = pg ? '= any(array(' : 'in (';
  const close = pg ? '))' : ')';
  return `delete from "events" where "seq" ${open}
    select "e"."seq" from "events" as "e"
    where "e"."seq" <= ${p(1)} and +"e"."ts" < ${p(2)}
      and ("e"."type" != ${p(3)} or not exists (
        select 1 from "fds" as "f"
        where "f"."stream_id" = "e"."stream_id" and "f"."closed_at" is null and "f"."cursor" < "e"."seq"))
    order by "e"."seq" limit ${p(4)}
  ${close} returning "seq"`;
};

/** Delete events older than `cutoff` (epoch ms) that nobody still needs; bounded per call. */
export async function dropExpired(
  tx: WriteTx,
  cutoff: number,
  limit = RETENTION_BATCH,
): Promise<RetentionResult> {
  const last = await lastExpiredQuery(tx.db, cutoff).executeTakeFirst();
  if (last === undefined) return { deleted: 0, upToSeq: 0 };
  const upTo = Number(last.seq);
  const result = await tx.db.executeQuery<{ seq: number }>(
    CompiledQuery.raw(victimsSql(tx.kind === 'postgres'), [upTo, cutoff, 'stream.message', limit]),
  );
  let max = 0;
  for (const r of result.rows) max = Math.max(max, Number(r.seq));
  return { deleted: result.rows.length, upToSeq: max };
}

/** The statements `dropExpired` runs, for plan checks. */
export const retentionStatements = {
  lastExpired: (db: Kysely<Database>, cutoff: number) => lastExpiredQuery(db, cutoff).compile(),
  victims: (kind: 'sqlite' | 'postgres', upTo: number, cutoff: number, limit = RETENTION_BATCH) =>
    CompiledQuery.raw(victimsSql(kind === 'postgres'), [upTo, cutoff, 'stream.message', limit]),
};
