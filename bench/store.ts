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
  const ddl = src
    .prepare(`select sql from sqlite_master where tbl_name = 'events' and sql is not null order by type desc`)
    .all() as Array<{ sql: string }>;
  const rows = src.prepare('select * from events order by seq').raw().all() as unknown[][];
  src.close();
  const raw = new SqliteDatabase(join(dir, 'raw.db'));
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  for (const d of ddl) raw.exec(d.sql);
  const insert = raw.prepare(
    'insert into events (seq, id, zone, ts, type, actor, session_id, stream_id, payload) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
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
    return [
      {
        name: 'sqlite replay by cursor (tail, limit 10000)',
        value: round(read / (ms / 1000)),
        unit: 'events/s',
        goal: 300_000,
        note: `${read} events, payload JSON parsed, best of 3 passes`,
      },
    ];
  } finally {
    await store.close();
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
    const note = `${latencies.length} appends, ${appenders} concurrent callers, ${transactions} transactions, synchronous_commit=off`;
    return [
      { name: names[0]!, value: round(latencies.length / (ms / 1000)), unit: 'events/s', note },
      { name: names[1]!, value: round(pct(0.5), 2), unit: 'ms' },
      { name: names[2]!, value: round(pct(0.99), 2), unit: 'ms' },
    ];
  } finally {
    await store.close();
    await dropSchema(schema);
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

export const storeBenches = { sqliteAppend, sqliteReplay, postgresAppend };

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
