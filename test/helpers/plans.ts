/**
 * "Indexed" proved by the database, not by a stopwatch: record the queries a piece of code
 * runs through a store's reader, then ask the database for each one's plan and name the
 * tables it reads from end to end. SQLite: `EXPLAIN QUERY PLAN` (`SCAN t`); PostgreSQL:
 * `EXPLAIN (FORMAT JSON)` (`Seq Scan`). SQLite's `USE TEMP B-TREE FOR ORDER BY` counts too: a
 * page taken after sorting every row the range found. A test fills the table first (and ANALYZEs) so that a
 * full scan would be the planner's choice only if no index fits.
 */
import type {
  CompiledQuery,
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { Store } from '../../src/store/store.ts';

class Capture implements KyselyPlugin {
  nodes: RootOperationNode[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.nodes.push(args.node);
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/**
 * The read queries `run` makes through `store.reader` (the kernel reads through that
 * property), compiled. The reader is swapped for a recording one while `run` runs.
 */
export async function readsOf(store: Store, run: () => Promise<unknown>): Promise<CompiledQuery[]> {
  const capture = new Capture();
  const plain = store.reader;
  const mutable = store as { reader: Store['reader'] };
  mutable.reader = plain.withPlugin(capture);
  try {
    await run();
  } finally {
    mutable.reader = plain;
  }
  const executor = plain.getExecutor();
  return capture.nodes.map((n) => executor.compileQuery(n, { queryId: 'plan' } as never));
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
  if (store.kind === 'sqlite') {
    const res = await store.reader.executeQuery<{ detail: string }>({
      ...q,
      sql: `explain query plan ${q.sql}`,
    });
    for (const { detail } of res.rows) {
      const m = /^SCAN (\w+)/.exec(detail);
      if (m && tables.includes(m[1]!)) out.push(detail);
      // Sorting what it found: it read every match of the index range, not a page of them.
      if (/^USE TEMP B-TREE FOR ORDER BY/.test(detail)) out.push(detail);
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
