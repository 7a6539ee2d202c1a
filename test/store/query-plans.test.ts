/**
 * Every hot query has an index that fits it, on both backends: the test fills a store as a
 * long-running warren has it (tens of thousands of events, thousands of sessions and fds,
 * few of them live), asks each database for its plan, and fails on a full scan of
 * `events`, `sessions` or `fds`. SQLite is checked twice: with the statistics taken at
 * open (before the data: what a store sees until its next `PRAGMA optimize`) and after a
 * fresh ANALYZE. PostgreSQL is checked after ANALYZE, with enough rows that a sequential
 * scan would be its choice only if no index fits.
 *
 * The kernel's shapes are reproduced here (the kernel builds them inline); `log.ts`, the
 * retention check and the cursor flush are captured from the store's own code.
 */
import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import {
  type CompiledQuery,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  sql,
  type UnknownRow,
} from 'kysely';
import { flushCursorsStatements } from '../../src/store/cursors.ts';
import { LogReader } from '../../src/store/log.ts';
import { retentionStatements } from '../../src/store/retention.ts';
import type { Store } from '../../src/store/store.ts';
import { forEachStore } from '../helpers/stores.ts';
import { fillLog, fillSessions } from './fill-log.ts';

const WATCHED = ['events', 'sessions', 'fds'];
/** Partial indexes over open rows only: walking one costs what is live, not what ever was. */
const LIVE_ONLY_INDEXES = ['fds_holder_open', 'streams_owner_open'];
const T0 = 1_600_000_000_000;
/**
 * "Live" spelled as the statuses it means. The kernel writes `status != 'stopped'` in the
 * zone's live count at spawn and the reconciler's `unheld`: no index can serve a `!=`, so
 * those walk every session of the zone (or all of them) that ever ran, and PostgreSQL picks
 * a sequential scan. Checked here in the shape they need to take. (`ps` keeps its `!=`: it
 * walks `sessions_zone_id` in id order and stops at its page.)
 */
const LIVE = ['pending', 'running', 'idle', 'suspended'] as const;

/** Records the operation nodes a piece of store code runs, so their plans can be asked for. */
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

type Shape = { name: string; queries: (store: Store) => Promise<CompiledQuery[]> };

/** Compile whatever `run` executes through a capturing reader. */
async function captured(store: Store, run: (log: LogReader, db: Store['reader']) => Promise<unknown>) {
  const capture = new Capture();
  const db = store.reader.withPlugin(capture);
  await run(new LogReader(db), db);
  const executor = store.reader.getExecutor();
  return capture.nodes.map((n) => executor.compileQuery(n, { queryId: 'plan' } as never));
}

const compiled =
  (...qs: Array<{ compile(): CompiledQuery }>) =>
  async () =>
    qs.map((q) => q.compile());

function shapes(store: Store): Shape[] {
  const db = store.reader;
  const log = (name: string, run: (log: LogReader) => Promise<unknown>): Shape => ({
    name: `log.${name}`,
    queries: (s) => captured(s, (l) => run(l)),
  });
  const kernel = (name: string, ...qs: Array<{ compile(): CompiledQuery }>): Shape => ({
    name: `kernel: ${name}`,
    queries: compiled(...qs),
  });
  const msg = (stream: string) =>
    db.selectFrom('events').where('stream_id', '=', stream).where('type', '=', 'stream.message');
  return [
    log('sessionEvents', (l) => l.sessionEvents('fill-s7', { from: 1000 })),
    log('events by type', (l) => l.events({ zone: 'default', type: 'agent.output' })),
    log('events by time', (l) => l.events({ zone: 'default', since: T0 + 100, until: T0 + 200 })),
    log('events before', (l) => l.events({ zone: 'default', before: 30_000 })),
    log('transcript of a quiet stream', (l) => l.transcript('quiet')),
    log('transcript page', (l) => l.transcript('fill-r3', { before: 40_000 })),
    log('tail', (l) => l.tail(40_000)),
    log('messagesAfter, quiet stream', (l) => l.messagesAfter('quiet', 0)),
    log('messagesAfter, busy stream', (l) => l.messagesAfter('fill-r3', 40_000)),
    log('head', (l) => l.head()),
    kernel(
      'undelivered count (streams.ts)',
      msg('quiet').select(sql<number>`count(*)`.as('n')).where('seq', '>', 10).where('actor', '!=', 'ses_50'),
    ),
    kernel(
      'hasUntakenInput (kernel.ts)',
      msg('quiet')
        .select('seq')
        .where('seq', '>', 10)
        .where('seq', '<=', 60_000)
        .where('actor', '!=', 'ses_50')
        .limit(1),
    ),
    kernel(
      'read: the fd row',
      db
        .selectFrom('fds')
        .selectAll()
        .where('zone', '=', 'default')
        .where('holder', '=', 'ses_50')
        .where('num', '=', 2)
        .where('closed_at', 'is', null),
    ),
    kernel(
      'listFds',
      db
        .selectFrom('fds')
        .innerJoin('streams', 'streams.id', 'fds.stream_id')
        .selectAll('fds')
        .select(['streams.name as stream_name'])
        .where('fds.zone', '=', 'default')
        .where('fds.holder', '=', 'init')
        .where('fds.closed_at', 'is', null)
        .orderBy('fds.num', 'asc'),
    ),
    kernel(
      'listStreams of a session, and each stream subscribers',
      db
        .selectFrom('streams')
        .selectAll()
        .where('zone', '=', 'default')
        .where('closed_at', 'is', null)
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('fds')
            .select('stream_id')
            .where('holder', '=', 'ses_50')
            .where('closed_at', 'is', null),
        )
        .orderBy('created_at', 'asc'),
      db
        .selectFrom('fds')
        .selectAll()
        .where('stream_id', '=', 'str_50')
        .where('closed_at', 'is', null)
        .orderBy('created_at', 'asc'),
    ),
    kernel(
      'transcript permission (ever held)',
      db.selectFrom('fds').select('id').where('holder', '=', 'ses_50').where('stream_id', '=', 'str_50'),
    ),
    kernel(
      'childOf',
      db
        .selectFrom('fds')
        .innerJoin('streams', 'streams.id', 'fds.stream_id')
        .select(['streams.session_id', 'streams.kind'])
        .where('fds.zone', '=', 'default')
        .where('fds.holder', '=', 'init')
        .where('fds.num', '=', 52)
        .where('fds.closed_at', 'is', null),
    ),
    kernel(
      'session by id; ps; subtree',
      db.selectFrom('sessions').selectAll().where('id', '=', 'ses_50'),
      // ps: a page of live sessions in id order, the first and a later one (proc.ts).
      db
        .selectFrom('sessions')
        .selectAll()
        .where('zone', '=', 'default')
        .where('status', '!=', 'stopped')
        .orderBy('id', 'asc')
        .limit(201),
      db
        .selectFrom('sessions')
        .selectAll()
        .where('zone', '=', 'default')
        .where('status', '!=', 'stopped')
        .where('id', '>', 'ses_50')
        .orderBy('id', 'asc')
        .limit(201),
      db.selectFrom('sessions').selectAll().where('id', 'in', ['ses_50', 'ses_100']),
      db.selectFrom('sessions').select('id').where('parent_id', 'in', ['ses_50', 'ses_100']),
    ),
    kernel(
      'recover after restart',
      db
        .selectFrom('sessions')
        .selectAll()
        .where('status', 'in', ['pending', 'running', 'idle'])
        .where('depth', '>', 0),
      db
        .selectFrom('sessions')
        .select(['id', 'term_deadline'])
        .where('status', '!=', 'stopped')
        .where('term_deadline', 'is not', null),
    ),
    kernel(
      'spawn: idempotency, spawner fds, live counts',
      db.selectFrom('sessions').selectAll().where('zone', '=', 'default').where('idempotency_key', '=', 'k'),
      db
        .selectFrom('fds')
        .innerJoin('streams', 'streams.id', 'fds.stream_id')
        .select(['fds.num', 'streams.kind'])
        .where('fds.holder', '=', 'init')
        .where('streams.session_id', '=', 'ses_50')
        .where('fds.closed_at', 'is', null),
      db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '!=', 'stopped')
        .where('depth', '>', 0)
        .where('parent_id', '=', 'ses_50'),
      db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', 'in', LIVE)
        .where('depth', '>', 0)
        .where('zone', '=', 'default'),
    ),
    kernel(
      'lifecycle and lookups',
      db
        .selectFrom('sessions')
        .select('id')
        .where('parent_id', '=', 'ses_50')
        .where('status', '!=', 'stopped'),
      db.selectFrom('streams').selectAll().where('owner', '=', 'ses_50').where('closed_at', 'is', null),
      db.selectFrom('streams').selectAll().where('session_id', '=', 'ses_50').where('closed_at', 'is', null),
      db
        .selectFrom('fds')
        .innerJoin('streams', 'streams.id', 'fds.stream_id')
        .select('fds.id')
        .where('streams.session_id', '=', 'ses_50')
        .where('streams.kind', 'in', ['lifecycle', 'pipe'])
        .where('fds.closed_at', 'is', null)
        .where('fds.holder', '!=', 'ses_50'),
      db.selectFrom('fds').selectAll().where('holder', '=', 'ses_50').where('closed_at', 'is', null),
      db.selectFrom('fds').selectAll().where('stream_id', '=', 'str_50').where('closed_at', 'is', null),
      db
        .selectFrom('fds')
        .select((eb) => eb.fn.max('num').as('max'))
        .where('zone', '=', 'default')
        .where('holder', '=', 'ses_50'),
      db
        .selectFrom('fds')
        .selectAll()
        .where('holder', '=', 'ses_50')
        .where('stream_id', '=', 'str_50')
        .where('closed_at', 'is', null),
    ),
    kernel(
      'reconcile: deadlines, ttl, lost agents',
      db
        .selectFrom('sessions')
        .select('id')
        .where('status', '!=', 'stopped')
        .where('term_deadline', '<=', T0)
        .limit(500),
      db
        .selectFrom('sessions')
        .select('id')
        .where('status', '!=', 'stopped')
        .where('expires_at', '<=', T0)
        .limit(500),
      db
        .selectFrom('sessions')
        .select(['id', 'updated_at'])
        .where('status', 'in', ['running', 'idle'])
        .where('depth', '>', 0),
    ),
    kernel(
      'reconcile: unheld sessions',
      db
        .selectFrom('sessions')
        .select('id')
        .where('status', 'in', LIVE)
        .where('depth', '>', 0)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('fds')
                .innerJoin('streams', 'streams.id', 'fds.stream_id')
                .select('fds.id')
                .whereRef('streams.session_id', '=', 'sessions.id')
                .where('streams.kind', 'in', ['lifecycle', 'pipe'])
                .where('fds.closed_at', 'is', null)
                .whereRef('fds.holder', '!=', 'sessions.id'),
            ),
          ),
        )
        .limit(500),
    ),
    kernel(
      'fd table load at start (open fds only)',
      db.selectFrom('fds').selectAll().where('closed_at', 'is', null),
    ),
    {
      name: 'retention check',
      queries: async (s) => [
        retentionStatements.lastExpired(s.reader, T0 + 20_000),
        retentionStatements.victims(s.kind, 20_000, T0 + 20_000),
      ],
    },
    {
      name: 'cursor flush',
      queries: async (s) => flushCursorsStatements(s.kind, [{ id: 'fd_50_1', cursor: 99 }]),
    },
    {
      name: 'cursor flush in a cluster (the holder’s owner checked)',
      queries: async (s) => flushCursorsStatements(s.kind, [{ id: 'fd_50_1', cursor: 99 }], { node: 'n1' }),
    },
  ];
}

/** SQLite: `SCAN t` (optionally `USING [COVERING] INDEX i`) is a full pass over t or over index i. */
async function sqliteScans(store: Store, q: CompiledQuery): Promise<string[]> {
  const res = await store.reader.executeQuery<{ detail: string }>({
    ...q,
    sql: `explain query plan ${q.sql}`,
  });
  const out: string[] = [];
  for (const { detail } of res.rows) {
    const m = /^SCAN (\w+)(?: AS \w+)?(?: USING (?:COVERING )?INDEX (\w+))?/.exec(detail);
    if (!m || !WATCHED.includes(m[1]!)) continue;
    if (m[2] && LIVE_ONLY_INDEXES.includes(m[2])) continue;
    out.push(detail);
  }
  return out;
}

interface PgNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PgNode[];
}

/** The whole plan as text: SQLite's details, PostgreSQL's JSON. */
async function planText(store: Store, q: CompiledQuery): Promise<string> {
  const prefix = store.kind === 'sqlite' ? 'explain query plan' : 'explain (format json)';
  const res = await store.reader.executeQuery<Record<string, unknown>>({ ...q, sql: `${prefix} ${q.sql}` });
  return store.kind === 'sqlite'
    ? res.rows.map((r) => String(r.detail)).join('\n')
    : JSON.stringify(res.rows[0]?.['QUERY PLAN']);
}

async function pgScans(store: Store, q: CompiledQuery): Promise<string[]> {
  const res = await store.reader.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PgNode }> }>({
    ...q,
    sql: `explain (format json) ${q.sql}`,
  });
  const out: string[] = [];
  const walk = (n: PgNode) => {
    if (n['Node Type'] === 'Seq Scan' && WATCHED.includes(n['Relation Name'] ?? ''))
      out.push(`Seq Scan on ${n['Relation Name']}`);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(res.rows[0]!['QUERY PLAN'][0]!.Plan);
  return out;
}

async function assertNoFullScans(store: Store, when: string): Promise<void> {
  const failures: string[] = [];
  for (const shape of shapes(store)) {
    for (const q of await shape.queries(store)) {
      const scans = store.kind === 'sqlite' ? await sqliteScans(store, q) : await pgScans(store, q);
      if (scans.length > 0) failures.push(`${shape.name}: ${scans.join('; ')}\n    ${q.sql}`);
    }
  }
  assert.deepEqual(failures, [], `full scans (${when}):\n  ${failures.join('\n  ')}`);
}

forEachStore('query plans', (target) => {
  let store: Store;
  before(async () => {
    store = await target.open();
    await fillLog(store, { events: 60_000, t0: T0 });
    await fillSessions(store, { sessions: 5_000 });
  });

  if (target.kind === 'sqlite') {
    it('no hot query scans events, sessions or fds, with the statistics taken at open', async () => {
      await assertNoFullScans(store, 'statistics from open');
    });
  }

  it('no hot query scans events, sessions or fds after ANALYZE', async () => {
    await store.analyze();
    await assertNoFullScans(store, 'after ANALYZE');
  });

  it('every read of a stream plans on the (stream_id, type, seq) index, not the type index', async () => {
    // Not a scan in the plan's words, but the bug it was: the type index walks every
    // message of every stream to find a quiet stream's few.
    const reads = shapes(store).filter((sh) =>
      /^log\.(messagesAfter|transcript)|undelivered|hasUntakenInput/.test(sh.name),
    );
    assert.equal(reads.length, 6);
    for (const shape of reads) {
      for (const q of await shape.queries(store)) {
        const plan = await planText(store, q);
        assert.match(plan, /events_stream_type_seq/, `${shape.name}:\n${plan}`);
      }
    }
  });
});
