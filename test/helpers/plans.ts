/**
 * "Indexed" proved by the database, not by a stopwatch: record the queries a piece of code
 * runs through a store's reader, then ask the database for each one's plan and name the
 * tables it reads from end to end. SQLite: `EXPLAIN QUERY PLAN` (`SCAN t`); PostgreSQL:
 * `EXPLAIN (FORMAT JSON)` (`Seq Scan`). SQLite's `USE TEMP B-TREE FOR ORDER BY` counts too: a
 * page taken after sorting every row the range found. A test fills the table first (and ANALYZEs) so that a
 * full scan would be the planner's choice only if no index fits.
 */
import type { CompiledQuery } from 'kysely';
import type { Store } from '../../src/store/store.ts';

/**
 * The queries `run` makes through the store's reader, as compiled. The kernel and the plugins
 * (whose `tables.reader` is the same Kysely instance) run every query through that instance's
 * executor, so its `executeQuery` is wrapped to record them while `run` runs.
 */
export async function readsOf(store: Store, run: () => Promise<unknown>): Promise<CompiledQuery[]> {
  const executor = store.reader.getExecutor() as { executeQuery: (q: CompiledQuery, id: unknown) => unknown };
  const plain = executor.executeQuery;
  const seen: CompiledQuery[] = [];
  executor.executeQuery = function (this: unknown, q: CompiledQuery, id: unknown) {
    seen.push(q);
    return plain.call(this, q, id);
  };
  try {
    await run();
  } finally {
    executor.executeQuery = plain;
  }
  return seen;
}

interface PgNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PgNode[];
}

/** The tables of `tables` that `q` reads in full (a scan of the table, or of a whole index of it). */
export async function fullScans(
  store: Store,
  q: CompiledQuery,
  tables: readonly string[],
): Promise<string[]> {
  const out: string[] = [];
  // Sorts count only in queries over the watched tables (other work runs meanwhile: a tail of the log).
  const watched = tables.some((t) => q.sql.includes(`"${t}"`));
  if (store.kind === 'sqlite') {
    const aliases = [...q.sql.matchAll(/"(\w+)" as "(\w+)"/g)]
      .filter((m) => tables.includes(m[1]!))
      .map((m) => m[2]!);
    const res = await store.reader.executeQuery<{ detail: string }>({
      ...q,
      sql: `explain query plan ${q.sql}`,
    });
    for (const { detail } of res.rows) {
      // `SCAN t` or `SCAN alias` (SQLite names a table by its alias in a join).
      const m = /^SCAN (\w+)/.exec(detail);
      if (m && (tables.includes(m[1]!) || aliases.includes(m[1]!))) out.push(detail);
      // Sorting what it found: it read every match of the index range, not a page of them.
      if (watched && /^USE TEMP B-TREE FOR ORDER BY/.test(detail)) out.push(detail);
    }
    return out;
  }
  const res = await store.reader.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PgNode }> }>({
    ...q,
    sql: `explain (format json) ${q.sql}`,
  });
  const walk = (n: PgNode) => {
    if (n['Node Type'] === 'Seq Scan' && tables.includes(n['Relation Name'] ?? ''))
      out.push(`Seq Scan on ${n['Relation Name']}`);
    // A page taken after sorting every row found (SQLite's TEMP B-TREE, below).
    if (watched && n['Node Type'] === 'Sort') out.push('Sort');
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(res.rows[0]!['QUERY PLAN'][0]!.Plan);
  return out;
}

/** Every query `run` reads with, and any full scan of `tables` in their plans (expected: none). */
export async function scansOf(
  store: Store,
  tables: readonly string[],
  run: () => Promise<unknown>,
): Promise<{ queries: number; scans: string[] }> {
  const queries = await readsOf(store, run);
  const scans: string[] = [];
  for (const q of queries)
    for (const s of await fullScans(store, q, tables)) scans.push(`${s}\n    ${q.sql}`);
  return { queries: queries.length, scans };
}
