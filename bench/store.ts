/**
 * Store benchmarks. Each function returns rows for the bench table; run this file on its
 * own (`npx tsx bench/store.ts`) to print them.
 *
 * - sqliteAppend: durable appends through the GroupCommitWriter vs raw better-sqlite3
 *   inserts of the same rows, same table, same pragmas, same batch sizes, same run.
 * - sqliteReplay: reading the whole log back by cursor (tail, pages of 10 000).
 * - postgresAppend: throughput and single-append latency under concurrency.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import type { NewEvent } from '../src/store/events.ts';
import { Store } from '../src/store/store.ts';
import { systemClock } from '../src/util/clock.ts';
import { createIds } from '../src/util/ids.ts';
import { fillLog } from '../test/store/fill-log.ts';
import { eventsDdl, floorDb } from './lib/floor.ts';

export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  /** What `value` is compared with, measured in the same run. */
  baseline?: number;
  /** value / baseline. */
  ratio?: number;
  /** The minimum wanted: for `ratio` when the row has one, else for `value`. */
  goal?: number;
  /** The most allowed for `value` (rows where lower is better: latencies). */
  max?: number;
  /** Why a row was skipped, or what it measured. */
  note?: string;
}

const PG_URL = process.env.WARREN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const event = (i: number): NewEvent => ({
  zone: 'bench',
  type: i % 4 === 0 ? 'stream.message' : 'agent.output',
  actor: `ses_${i % 97}`,
  session_id: `ses_${i % 97}`,
  stream_id: i % 4 === 0 ? `str_${i % 13}` : null,
  payload: { i, text: 'the quick brown fox jumps over the lazy dog', tokens: { in: i % 1000, out: 42 } },
});

const round = (n: number, digits = 0) => Number(n.toFixed(digits));

function tempDir(): { dir: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-'));
  return { dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

/** (a) Appends through the writer vs raw better-sqlite3, 9-column rows, identical table. */
export async function sqliteAppend(
  opts: { events?: number; appenders?: number; rounds?: number } = {},
): Promise<BenchRow[]> {
  const total = opts.events ?? 100_000;
  const appenders = opts.appenders ?? 100;
  const rounds = opts.rounds ?? 3;
  using tmp = tempDir();
  // One small warm-up round (JIT, page cache), then the best of `rounds` for each side:
  // the machine's noise only ever slows a round down.
  await appendRound(join(tmp.dir, 'warm'), Math.min(total, 10_000), appenders);
  let best: AppendRound | undefined;
  let bestRaw = 0;
  for (let r = 0; r < rounds; r++) {
    const result = await appendRound(join(tmp.dir, `r${r}`), total, appenders);
    if (!best || result.writerRate > best.writerRate) best = result;
    bestRaw = Math.max(bestRaw, result.rawRate);
  }
  const { writerRate, appended, batches } = best!;
  return [
    {
      name: 'sqlite append: writer vs raw better-sqlite3',
      value: round(writerRate),
      unit: 'events/s',
      baseline: round(bestRaw),
      ratio: round(writerRate / bestRaw, 2),
      goal: 0.5,
      note: `${appended} events, ${appenders} concurrent appenders, ${batches} transactions (mean ${round(appended / batches)} events), best of ${rounds}`,
    },
  ];
}

interface AppendRound {
  writerRate: number;
  rawRate: number;
  appended: number;
  batches: number;
}

async function appendRound(dir: string, total: number, appenders: number): Promise<AppendRound> {
  const perAppender = Math.ceil(total / appenders);
  // The writer: `appenders` callers, each appending one event at a time, awaiting each.
  const store = await Store.open(
    { url: join(dir, 'writer.db'), durability: 'process' },
    systemClock,
    createIds(systemClock),
  );
  const batches: number[] = [];
  store.writer.onCommit((events) => batches.push(events.length));
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: appenders }, async (_, a) => {
      for (let k = 0; k < perAppender; k++) await store.writer.append([event(a * perAppender + k)]);
    }),
  );
  const writerMs = performance.now() - t0;
  const appended = batches.reduce((x, y) => x + y, 0);
  await store.close();

  // Raw: the same table (its DDL copied from the store's file), the same pragmas, the same
  // rows, one prepared insert per row, in transactions of the sizes the writer committed.
  const src = new SqliteDatabase(join(dir, 'writer.db'), { readonly: true });
  const rows = src.prepare('select * from events order by seq').raw().all() as unknown[][];
  src.close();
  const { db: raw, insert } = floorDb(join(dir, 'raw.db'), eventsDdl(join(dir, 'writer.db')));
  const insertBatch = raw.transaction((batch: unknown[][]) => {
    for (const r of batch) insert.run(r);
  });
  const t1 = performance.now();
  let at = 0;
  for (const size of batches) {
    insertBatch(rows.slice(at, at + size));
    at += size;
  }
  const rawMs = performance.now() - t1;
  raw.close();
  return {
    writerRate: appended / (writerMs / 1000),
    rawRate: rows.length / (rawMs / 1000),
    appended,
    batches: batches.length,
  };
}

/** (b) Replay of the whole log by cursor, pages of 10 000. */
export async function sqliteReplay(opts: { events?: number } = {}): Promise<BenchRow[]> {
  const total = opts.events ?? 200_000;
  using tmp = tempDir();
  const store = await Store.open(
    { url: join(tmp.dir, 'replay.db'), durability: 'process' },
    systemClock,
    createIds(systemClock),
  );
  try {
    for (let i = 0; i < total; i += 5000) {
      await store.writer.append(Array.from({ length: Math.min(5000, total - i) }, (_, k) => event(i + k)));
    }
    // Warm the page cache and statement cache once, as a long-running kernel would be;
    // then the best of three full passes.
    await store.log.tail(0, { limit: 10_000 });
    let ms = Number.POSITIVE_INFINITY;
    let read = 0;
    for (let pass = 0; pass < 3; pass++) {
      const t0 = performance.now();
      let after = 0;
      read = 0;
      for (;;) {
        const page = await store.log.tail(after, { limit: 10_000 });
        if (page.length === 0) break;
        read += page.length;
        after = page.at(-1)!.seq;
      }
      ms = Math.min(ms, performance.now() - t0);
    }
    if (read !== total) throw new Error(`replay read ${read} of ${total} events`);
    const raw = rawReplay(join(tmp.dir, 'replay.db'), total);
    const value = round(read / (ms / 1000));
    return [
      {
        name: 'sqlite replay by cursor (tail, limit 10000)',
        value,
        unit: 'events/s',
        baseline: round(raw),
        ratio: round(value / raw, 2),
        goal: 300_000,
        note: `${read} events, payload JSON parsed, best of 3 passes; baseline: the same pages read with a bare better-sqlite3 statement and JSON.parse, same run`,
      },
    ];
  } finally {
    await store.close();
  }
}

/** The floor under a replay: the same pages, a bare prepared statement, payloads parsed; events/s, best of 3. */
function rawReplay(file: string, total: number): number {
  const db = new SqliteDatabase(file, { readonly: true });
  try {
    const page = db.prepare('select * from events where seq > ? order by seq limit 10000');
    let best = Number.POSITIVE_INFINITY;
    for (let pass = 0; pass < 3; pass++) {
      const t0 = performance.now();
      let after = 0;
      let read = 0;
      for (;;) {
        const rows = page.all(after) as Array<{ seq: number; payload: string }>;
        if (rows.length === 0) break;
        for (const r of rows) JSON.parse(r.payload);
        read += rows.length;
        after = rows.at(-1)!.seq;
      }
      if (read !== total) throw new Error(`raw replay read ${read} of ${total} events`);
      best = Math.min(best, performance.now() - t0);
    }
    return total / (best / 1000);
  } finally {
    db.close();
  }
}

/** (c) PostgreSQL: single-event appends from many concurrent callers. */
export async function postgresAppend(
  opts: { events?: number; appenders?: number } = {},
): Promise<BenchRow[]> {
  const total = opts.events ?? 20_000;
  const appenders = opts.appenders ?? 64;
  const perAppender = Math.ceil(total / appenders);
  const names = ['postgres append throughput', 'postgres append latency p50', 'postgres append latency p99'];
  const problem = await pgProblem();
  if (problem) {
    return names.map((name) => ({
      name,
      value: Number.NaN,
      unit: '',
      note: `SKIPPED: PostgreSQL unreachable at ${PG_URL}: ${problem}`,
    }));
  }
  const schema = `bench_${Math.random().toString(36).slice(2, 10)}`;
  const store = await Store.open(
    { url: PG_URL, durability: 'process', schema },
    systemClock,
    createIds(systemClock),
  );
  try {
    let transactions = 0;
    store.writer.onCommit(() => transactions++);
    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: appenders }, async (_, a) => {
        for (let k = 0; k < perAppender; k++) {
          const s = performance.now();
          await store.writer.append([event(a * perAppender + k)]);
          latencies.push(performance.now() - s);
        }
      }),
    );
    const ms = performance.now() - t0;
    latencies.sort((x, y) => x - y);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
    const meanBatch = Math.max(1, Math.round(latencies.length / transactions));
    const raw = await rawPgInsertRate(schema, latencies.length, meanBatch);
    const rate = latencies.length / (ms / 1000);
    const note = `${latencies.length} appends, ${appenders} concurrent callers, ${transactions} transactions (mean ${meanBatch} events); baseline: raw pg multi-row inserts of ${meanBatch} rows into an identical table, one connection, synchronous_commit=off`;
    return [
      {
        name: names[0]!,
        value: round(rate),
        unit: 'events/s',
        baseline: round(raw),
        ratio: round(rate / raw, 2),
        goal: 0.5,
        note,
      },
      { name: names[1]!, value: round(pct(0.5), 2), unit: 'ms' },
      { name: names[2]!, value: round(pct(0.99), 2), unit: 'ms' },
    ];
  } finally {
    await store.close();
    await dropSchema(schema);
  }
}

/**
 * The floor under a PostgreSQL append: plain multi-row inserts of `batch` rows (the
 * writer's mean batch), one after another on one connection, autocommit, into a copy of
 * `events` (same columns and indexes) in the same schema. No seq allocation, no queue.
 */
async function rawPgInsertRate(schema: string, total: number, batch: number): Promise<number> {
  const client = new pg.Client({
    connectionString: PG_URL,
    options: `-c search_path=${schema} -c synchronous_commit=off`,
  });
  await client.connect();
  try {
    await client.query('create table raw_events (like events including all)');
    const width = 9;
    const text = `insert into raw_events (seq, id, zone, ts, type, actor, session_id, stream_id, payload) values ${Array.from(
      { length: batch },
      (_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(', ')})`,
    ).join(', ')}`;
    const t0 = performance.now();
    let seq = 0;
    for (let done = 0; done + batch <= total; done += batch) {
      const params: unknown[] = [];
      for (let r = 0; r < batch; r++) {
        const e = event(++seq);
        params.push(
          seq,
          `raw${seq}`,
          e.zone,
          Date.now(),
          e.type,
          e.actor,
          e.session_id,
          e.stream_id,
          JSON.stringify(e.payload),
        );
      }
      await client.query(text, params);
    }
    return seq / ((performance.now() - t0) / 1000);
  } finally {
    await client.end();
  }
}

export async function pgProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/**
 * (d) Independent of the log's size: operations that do not read history, on a log of 1M
 * events vs one of 1,000 (same run, same shape: the small one is the big one's first
 * thousand events), interleaved call by call so both see the same machine. Each store is
 * reopened after its fill, as after a restart (statistics are taken at open). Value: the
 * ratio of medians, 1M / 1k.
 */
export async function logSize(
  opts: { big?: number; small?: number; calls?: number } = {},
): Promise<BenchRow[]> {
  const big = opts.big ?? 1_000_000;
  const small = opts.small ?? 1_000;
  const calls = opts.calls ?? 3000;
  using tmp = tempDir();
  const open = (name: string) =>
    Store.open({ url: join(tmp.dir, name), durability: 'process' }, systemClock, createIds(systemClock));
  const stores: Store[] = [];
  try {
    for (const [name, events] of [
      ['big.db', big],
      ['small.db', small],
    ] as const) {
      const fresh = await open(name);
      await fillLog(fresh, { events });
      // The quiet stream: ten messages after the fill.
      await fresh.writer.append(
        Array.from({ length: 10 }, () => ({ ...event(0), stream_id: 'quiet', type: 'stream.message' })),
      );
      await fresh.close();
      stores.push(await open(name));
    }
    const ops: Array<[string, (s: Store) => Promise<unknown>]> = [
      ['messagesAfter, quiet stream', (s) => s.log.messagesAfter('quiet', 0)],
      [
        'messagesAfter, busy stream at its head',
        async (s) => s.log.messagesAfter('fill-r7', await s.log.head()),
      ],
      ['head()', (s) => s.log.head()],
      ['append (one event, one commit)', (s) => s.writer.append([event(1)])],
      [
        'count due on an fd',
        (s) =>
          s.reader
            .selectFrom('events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('stream_id', '=', 'quiet')
            .where('type', '=', 'stream.message')
            .where('seq', '>', 0)
            .where('actor', '!=', 'nobody')
            .executeTakeFirst(),
      ],
    ];
    const rows: BenchRow[] = [];
    for (const [label, op] of ops) {
      const times: [number[], number[]] = [[], []];
      for (let i = 0; i < calls; i++) {
        for (let k = 0; k < 2; k++) {
          const t0 = performance.now();
          await op(stores[k]!);
          times[k]!.push(performance.now() - t0);
        }
      }
      const [atBig, atSmall] = times.map((t) => median(t) * 1000) as [number, number];
      rows.push({
        name: `log size: ${label}, 1M vs 1k`,
        value: round(atBig / atSmall, 2),
        unit: 'x',
        max: 1.2,
        note: `median ${round(atBig, 1)} µs at ${big.toLocaleString('en-US')} events, ${round(atSmall, 1)} µs at ${small.toLocaleString('en-US')}; ${calls} calls each, interleaved`,
      });
    }
    return rows;
  } finally {
    for (const s of stores) await s.close();
  }
}

/**
 * (e) WAL checkpoints off the event loop: single-event appends through the writer, paced
 * at `rate`/s, on a store whose checkpoints run in a worker thread vs one with SQLite's
 * automatic checkpoints inside commits (the old way), alternating in 500 ms slices so both
 * see the same machine. Rows: the worker's p99 and max commit latency; baseline: inline's.
 */
export async function sqliteCheckpoints(opts: { rate?: number; ms?: number } = {}): Promise<BenchRow[]> {
  const rate = opts.rate ?? 1000;
  const ms = opts.ms ?? 6000;
  using tmp = tempDir();
  const open = (name: string, checkpoints: 'worker' | 'inline') =>
    Store.open(
      { url: join(tmp.dir, name), durability: 'process', checkpoints },
      systemClock,
      createIds(systemClock),
    );
  const worker = await open('worker.db', 'worker');
  const inline = await open('inline.db', 'inline');
  const lat: [number[], number[]] = [[], []];
  try {
    const slice = 500;
    const perSlice = Math.round((rate * slice) / 1000);
    for (let t = 0; t < ms; t += slice) {
      for (const [k, store] of [worker, inline].entries()) {
        const start = performance.now();
        const pending: Promise<unknown>[] = [];
        for (let i = 0; i < perSlice; i++) {
          const due = start + (i * 1000) / rate;
          const wait = due - performance.now();
          if (wait > 0) await sleepMs(wait);
          const s0 = performance.now();
          pending.push(store.writer.append([event(i)]).then(() => lat[k]!.push(performance.now() - s0)));
        }
        await Promise.all(pending);
      }
    }
  } finally {
    await worker.close();
    await inline.close();
  }
  const [w, i] = lat.map((l) => l.sort((a, b) => a - b)) as [number[], number[]];
  const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  const note = `${w.length} appends each at ${rate}/s, alternating 500 ms slices; baseline: SQLite's automatic checkpoints inside commits`;
  return [
    {
      name: 'sqlite append p99, checkpoints in a worker',
      value: round(pct(w, 0.99), 3),
      unit: 'ms',
      baseline: round(pct(i, 0.99), 3),
      ratio: round(pct(w, 0.99) / pct(i, 0.99), 2),
      note,
    },
    {
      name: 'sqlite append max, checkpoints in a worker',
      value: round(w.at(-1)!, 2),
      unit: 'ms',
      baseline: round(i.at(-1)!, 2),
      ratio: round(w.at(-1)! / i.at(-1)!, 2),
    },
  ];
}

const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

export const storeBenches = { sqliteAppend, sqliteReplay, postgresAppend, logSize, sqliteCheckpoints };

export function formatRows(rows: BenchRow[]): string {
  const cells = rows.map((r) => [
    r.name,
    Number.isNaN(r.value) ? '-' : r.value.toLocaleString('en-US'),
    r.unit,
    r.baseline === undefined ? '' : r.baseline.toLocaleString('en-US'),
    r.ratio === undefined ? '' : r.ratio.toLocaleString('en-US', { maximumFractionDigits: 2 }),
    goalText(r),
    verdict(r),
    r.note ?? '',
  ]);
  const head = ['benchmark', 'value', 'unit', 'baseline', 'ratio', 'goal', '', 'note'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

function goalText(r: BenchRow): string {
  const parts: string[] = [];
  if (r.goal !== undefined) parts.push(`>= ${r.goal.toLocaleString('en-US')}`);
  if (r.max !== undefined) parts.push(`<= ${r.max.toLocaleString('en-US')}`);
  return parts.join(', ');
}

/** `ok` when every goal of the row is met, `MISS` when one is not, `skip` when it did not run, blank when it has none. */
export function verdict(r: BenchRow): '' | 'ok' | 'MISS' | 'skip' {
  if (r.goal === undefined && r.max === undefined) return '';
  if (Number.isNaN(r.value)) return 'skip';
  if (r.goal !== undefined && !((r.ratio ?? r.value) >= r.goal)) return 'MISS';
  if (r.max !== undefined && !(r.value <= r.max)) return 'MISS';
  return 'ok';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows: BenchRow[] = [];
  for (const bench of Object.values(storeBenches)) rows.push(...(await bench()));
  console.log(formatRows(rows));
}
