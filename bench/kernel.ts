/**
 * Kernel benchmarks, end to end through the syscall table (`warren.call`), the path every
 * surface takes. Run this file on its own (`npx tsx bench/kernel.ts`) to print its rows.
 *
 * - publishLatency: operator `ipc_write` on a room → the moment each subscribed session's
 *   agent sees the message in `deliver()`, at a paced 1 000 messages/s, with 1, 10 and 100
 *   async subscribers (SQLite), and 10 on PostgreSQL. Baseline: a bare durable append.
 * - spawnOverhead: `ipc_spawn` of a script agent that only listens, until the call returns
 *   with the session running. Baseline: the bare write unit at the floor of a spawn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { AgentHandle, AgentInput, Runtime } from '../src/runtimes/types.ts';
import type { SessionsTable } from '../src/store/schema.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { operator } from '../src/vocab/principal.ts';
import { eventsDdl, sqliteFloor } from './lib/floor.ts';
import { pacedIssue } from './lib/paced.ts';
import { type BenchRow, dropSchema, pgProblem } from './store.ts';

const PG_URL = process.env.WARREN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const op = operator('bench');
const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/** Room for hundreds of live sessions: the bench measures the kernel, not its limits. */
const benchKernel = {
  limits: { maxDepth: 10, maxChildren: 10_000, maxSessionsPerZone: 10_000 },
  resumeOnStart: false,
};

function tempDir(): { dir: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-'));
  return { dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

function summary(samples: number[]): { p50: number; p99: number; max: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 0.5), p99: percentile(s, 0.99), max: s.at(-1) ?? Number.NaN, n: s.length };
}

/**
 * Open-loop pacing: call `fn(i)` at `rate` per second for `ms`, never waiting for a call to
 * finish before the next is due (a slow kernel does not lower the offered load). Timers tick
 * at ~1 ms, so at 1 000/s a late tick issues what fell due in one go. Returns the rate achieved.
 */
async function paced(rate: number, ms: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const { calls, issuedMs } = await pacedIssue(rate, ms, fn);
  await Promise.all(calls);
  return calls.length / (issuedMs / 1000);
}

// ---------------------------------------------------------------- the bench-only runtime

type DeliverListener = (sessionId: string, input: AgentInput, at: number) => void;

/**
 * `bench-sink`: an agent with no turns that is always at a safe point and takes input as it
 * is handed over (acksOnDeliver), so the kernel's delivery path is all that is measured.
 */
class BenchSinkRuntime implements Runtime {
  readonly name = 'bench-sink';
  listener: DeliverListener = () => {};

  validate(): void {}

  async start(ctx: { sessionId: string }): Promise<AgentHandle> {
    const onDeliver = (input: AgentInput) => this.listener(ctx.sessionId, input, performance.now());
    return { ready: true, acksOnDeliver: true, deliver: onDeliver, stop: async () => {} };
  }
}

// ---------------------------------------------------------------- (a) publish → deliver

interface LatencyCase {
  subscribers: number;
  backend: 'sqlite' | 'postgres';
  rate?: number;
  warmupMs?: number;
  ms?: number;
}

interface LatencyResult {
  p50: number;
  p99: number;
  max: number;
  deliveries: number;
  rate: number;
  /** p99 of the time until the last subscriber had a message. */
  allP99: number;
  /** The writer during the measured run: transactions, units per transaction, mean ms each. */
  batches: number;
  unitsPerBatch: number;
  batchMs: number;
}

/** Publish → deliver latency on one warren (a fresh SQLite file or PostgreSQL schema). */
async function latencyCase(c: LatencyCase): Promise<LatencyResult> {
  const rate = c.rate ?? 1000;
  const warmupMs = c.warmupMs ?? 500;
  const ms = c.ms ?? 2500;
  const sink = new BenchSinkRuntime();
  using tmp = tempDir();
  const schema = `bench_${Math.random().toString(36).slice(2, 10)}`;
  const warren = await Warren.open({
    ...(c.backend === 'postgres' ? { db: PG_URL, schema } : { dataDir: tmp.dir }),
    kernel: benchKernel,
    runtimes: [sink],
  });
  try {
    const room = (await warren.call(op, 'streams_create', { name: 'bench-room' })) as { fd: number };
    const subs: string[] = [];
    for (let k = 0; k < c.subscribers; k++) {
      const spawned = (await warren.call(op, 'ipc_spawn', { runtime: 'bench-sink', pipe: 'detach' })) as {
        session: { id: string };
      };
      subs.push(spawned.session.id);
      await warren.call(op, 'streams_attach', {
        session: spawned.session.id,
        stream: 'bench-room',
        permission: 'r',
        mode: 'async',
      });
    }

    const run = async (phase: string, runMs: number) => {
      const n = Math.round((rate * runMs) / 1000);
      const sent = new Float64Array(n);
      const latencies: number[] = [];
      const lastArrival = new Float64Array(n);
      const seen = new Uint32Array(n);
      let received = 0;
      let done: () => void = () => {};
      const all = new Promise<void>((r) => {
        done = r;
      });
      sink.listener = (_session, input, at) => {
        for (const m of input.messages) {
          if (!m.text.startsWith(phase)) continue;
          const i = Number(m.text.slice(phase.length));
          latencies.push(at - sent[i]!);
          lastArrival[i] = Math.max(lastArrival[i]!, at);
          seen[i]! += 1;
          if (++received === n * c.subscribers) done();
        }
      };
      const achieved = await paced(rate, runMs, (i) => {
        sent[i] = performance.now();
        return warren.call(op, 'ipc_write', { fd: room.fd, message: `${phase}${i}` });
      });
      const timeout = sleep(10_000, 'timeout');
      if ((await Promise.race([all, timeout])) === 'timeout') {
        throw new Error(`${phase}: ${received} of ${n * c.subscribers} deliveries arrived within 10 s`);
      }
      const allLatencies = Array.from(lastArrival, (t, i) => t - sent[i]!);
      return { latencies, achieved, allLatencies, n };
    };

    // Warm-up (JIT, statement caches, page cache), then the measured run.
    await run('w', warmupMs);
    await warren.store.writer.drained();
    let batches = 0;
    let units = 0;
    let batchMs = 0;
    const stop = warren.store.writer.onBatch((b) => {
      batches += 1;
      units += b.units;
      batchMs += b.ms;
    });
    const m = await run('m', ms);
    stop();
    const s = summary(m.latencies);
    return {
      p50: s.p50,
      p99: s.p99,
      max: s.max,
      deliveries: s.n,
      rate: m.achieved,
      allP99: summary(m.allLatencies).p99,
      batches,
      unitsPerBatch: batches > 0 ? units / batches : 0,
      batchMs: batches > 0 ? batchMs / batches : 0,
    };
  } finally {
    sink.listener = () => {};
    await warren.close();
    if (c.backend === 'postgres') await dropSchema(schema);
  }
}

/**
 * The floor under a publish: one durable append, alone in its transaction, into a table
 * identical to `events`, with the store's pragmas (WAL, synchronous=NORMAL), paced the same.
 */
async function sqliteCommitFloor(opts: { rate?: number; ms?: number } = {}): Promise<number[]> {
  const rate = opts.rate ?? 1000;
  const ms = opts.ms ?? 2000;
  using tmp = tempDir();
  // Take the events DDL from a store the kernel migrated: same columns, same indexes.
  const w = await Warren.open({ dataDir: tmp.dir, kernel: benchKernel });
  await w.close();
  const floor = sqliteFloor(join(tmp.dir, 'floor.db'), eventsDdl(join(tmp.dir, 'warren.db')));
  try {
    const measure = async (runMs: number) => {
      const latencies: number[] = [];
      await paced(rate, runMs, async (i) => {
        const t = performance.now();
        floor.append(`m${i}`);
        latencies.push(performance.now() - t);
      });
      return latencies;
    };
    await measure(300);
    return await measure(ms);
  } finally {
    floor.close();
  }
}

/** The PostgreSQL floor: one autocommit insert (one round trip), synchronous_commit=off like the store. */
async function postgresCommitFloor(opts: { rate?: number; ms?: number } = {}): Promise<number[]> {
  const rate = opts.rate ?? 1000;
  const ms = opts.ms ?? 2000;
  const schema = `bench_${Math.random().toString(36).slice(2, 10)}`;
  // One connection, queued like the store's writer pool (max 1): an open-loop caller waits its turn.
  const client = new pg.Pool({
    connectionString: PG_URL,
    max: 1,
    options: `-c search_path=${schema} -c synchronous_commit=off`,
  });
  client.on('error', () => {});
  try {
    await client.query(`create schema "${schema}"`);
    await client.query(`create table floor (
      seq bigint primary key, id text not null unique, zone text not null, ts bigint not null,
      type text not null, actor text not null, session_id text, stream_id text, payload text not null)`);
    await client.query('create index floor_stream_seq on floor (stream_id, seq)');
    await client.query('create index floor_type_seq on floor (type, seq)');
    await client.query('create index floor_session_seq on floor (session_id, seq)');
    await client.query('create index floor_ts on floor (ts)');
    let seq = 0;
    const text =
      'insert into floor (seq, id, zone, ts, type, actor, session_id, stream_id, payload) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)';
    const measure = async (runMs: number) => {
      const latencies: number[] = [];
      await paced(rate, runMs, async (i) => {
        const t = performance.now();
        const s = ++seq;
        await client.query({
          name: 'floor-insert',
          text,
          values: [
            s,
            `evt_${s}`,
            'default',
            Date.now(),
            'stream.message',
            'operator:bench',
            null,
            'str_bench',
            JSON.stringify({ text: `m${i}`, kind: 'message' }),
          ],
        });
        latencies.push(performance.now() - t);
      });
      return latencies;
    };
    await measure(300);
    return await measure(ms);
  } finally {
    await client.query(`drop schema if exists "${schema}" cascade`).catch(() => {});
    await client.end();
  }
}

function latencyRows(
  label: string,
  r: LatencyResult,
  floor: { p50: number; p99: number; max: number },
  goal: { p99?: number },
  floorNote: string,
): BenchRow[] {
  return [
    {
      name: `${label} p50`,
      value: round(r.p50, 3),
      unit: 'ms',
      baseline: round(floor.p50, 3),
      ratio: round(r.p50 / floor.p50, 1),
      note: `${r.deliveries} deliveries at ${Math.round(r.rate)} msg/s offered; ${floorNote}`,
    },
    {
      name: `${label} p99`,
      value: round(r.p99, 3),
      unit: 'ms',
      baseline: round(floor.p99, 3),
      ratio: round(r.p99 / floor.p99, 1),
      ...(goal.p99 !== undefined ? { max: goal.p99 } : {}),
      note: `max ${round(r.max, 1)} ms (baseline max ${round(floor.max, 1)} ms); p99 until the last subscriber has it ${round(r.allP99, 2)} ms; writer: ${r.batches} transactions, ${round(r.unitsPerBatch, 1)} units and ${round(r.batchMs, 2)} ms each`,
    },
  ];
}

/** (a) Publish → deliver on SQLite with 1, 10 and 100 async subscribers. */
export async function publishLatency(opts: { counts?: number[]; ms?: number } = {}): Promise<BenchRow[]> {
  const counts = opts.counts ?? [1, 10, 100];
  const floor = summary(await sqliteCommitFloor());
  const floorNote = 'baseline: bare better-sqlite3 append+commit (same table, pragmas, pacing)';
  const rows: BenchRow[] = [];
  for (const subscribers of counts) {
    const r = await latencyCase({ subscribers, backend: 'sqlite', ...(opts.ms ? { ms: opts.ms } : {}) });
    rows.push(
      ...latencyRows(
        `publish→deliver, sqlite, ${subscribers} sub${subscribers === 1 ? '' : 's'}`,
        r,
        floor,
        subscribers === 100 ? { p99: 2 } : {},
        floorNote,
      ),
    );
  }
  return rows;
}

/** (c) Publish → deliver on PostgreSQL with 10 async subscribers. */
export async function publishLatencyPostgres(opts: { ms?: number } = {}): Promise<BenchRow[]> {
  const label = 'publish→deliver, postgres, 10 subs';
  const problem = await pgProblem();
  if (problem) {
    return [`${label} p50`, `${label} p99`].map((name) => ({
      name,
      value: Number.NaN,
      unit: '',
      note: `SKIPPED: PostgreSQL unreachable at ${PG_URL}: ${problem}`,
    }));
  }
  const floor = summary(await postgresCommitFloor());
  const r = await latencyCase({ subscribers: 10, backend: 'postgres', ...(opts.ms ? { ms: opts.ms } : {}) });
  return latencyRows(
    label,
    r,
    floor,
    { p99: 10 },
    'baseline: one autocommit pg insert, synchronous_commit=off (one round trip)',
  );
}

/**
 * (d) PostgreSQL's knee: publish → deliver with 10 subscribers at rising offered rates.
 * The knee is the highest rate whose p99 stays at or under 100 ms.
 */
export async function postgresKnee(opts: { rates?: number[]; ms?: number } = {}): Promise<BenchRow[]> {
  const rates = opts.rates ?? [1000, 2000, 3000, 4000, 5000, 6000, 8000];
  const label = 'postgres knee (10 subs, p99 <= 100 ms)';
  const problem = await pgProblem();
  if (problem) return [{ name: label, value: Number.NaN, unit: '', note: `SKIPPED: ${problem}` }];
  const seen: string[] = [];
  let knee = 0;
  for (const rate of rates) {
    let r: LatencyResult;
    try {
      r = await latencyCase({ subscribers: 10, backend: 'postgres', rate, ms: opts.ms ?? 2000 });
    } catch (error) {
      seen.push(`${rate}/s: ${(error as Error).message}`);
      break;
    }
    seen.push(
      `${rate}/s: p50 ${round(r.p50, 1)} p99 ${round(r.p99, 1)} ms, achieved ${round(r.rate, 0)}/s, ${round(r.unitsPerBatch, 1)} units per transaction`,
    );
    if (r.p99 > 100 || r.rate < rate * 0.9) break;
    knee = rate;
  }
  return [{ name: label, value: knee, unit: 'msg/s', goal: 3000, note: seen.join('; ') }];
}

// ---------------------------------------------------------------- (b) spawn

/** (b) ipc_spawn of a listening script agent, end to end, vs the bare write at its floor. */
export async function spawnOverhead(opts: { spawns?: number; warmup?: number } = {}): Promise<BenchRow[]> {
  const spawns = opts.spawns ?? 300;
  const warmup = opts.warmup ?? 30;
  using tmp = tempDir();
  const warren = await Warren.open({ dataDir: tmp.dir, kernel: benchKernel });
  try {
    const script = { steps: [{ listen: {} }] };
    const spawnOnce = async (): Promise<number> => {
      const t = performance.now();
      const res = (await warren.call(op, 'ipc_spawn', { runtime: 'script', script, pipe: 'detach' })) as {
        session: { id: string; status: string };
      };
      const ms = performance.now() - t;
      if (res.session.status !== 'running' && res.session.status !== 'idle')
        throw new Error(`spawned session is ${res.session.status}`);
      // Outside the timing: kill it (so no limit bites) and let its writes settle.
      await warren.call(op, 'kill', { id: res.session.id });
      await warren.store.writer.drained();
      return ms;
    };
    for (let i = 0; i < warmup; i++) await spawnOnce();
    const spawnMs: number[] = [];
    for (let i = 0; i < spawns; i++) spawnMs.push(await spawnOnce());

    // The floor of a spawn transaction: one unit that inserts a session row and appends one
    // event, through the same writer, on the same database, one at a time.
    // The row is a copy of a real spawned session's (whatever columns the schema has).
    const template = await warren.store.reader
      .selectFrom('sessions')
      .selectAll()
      .where('runtime', '=', 'script')
      .executeTakeFirstOrThrow();
    let k = 0;
    const unit = async (): Promise<number> => {
      const id = `ses_floor_${k++}`;
      const now = Date.now();
      const row: SessionsTable = { ...template, id, created_at: now, updated_at: now, ended_at: now };
      const t = performance.now();
      await warren.store.writer.write(async (tx) => {
        await tx.db.insertInto('sessions').values(row).execute();
        tx.append({
          zone: 'default',
          type: 'session.spawned',
          actor: 'operator:bench',
          session_id: id,
          payload: { parent: 'init', depth: 1, runtime: 'script' },
        });
      });
      return performance.now() - t;
    };
    for (let i = 0; i < warmup; i++) await unit();
    const floorMs: number[] = [];
    for (let i = 0; i < spawns; i++) floorMs.push(await unit());

    const s = summary(spawnMs);
    const f = summary(floorMs);
    return [
      {
        name: 'ipc_spawn (script, listen) p50',
        value: round(s.p50, 3),
        unit: 'ms',
        baseline: round(f.p50, 3),
        ratio: round(s.p50 / f.p50, 1),
        max: 5,
        note: `${s.n} sequential spawns after ${warmup} warm-up, each killed after; baseline: one writer unit inserting a session row + one event`,
      },
      {
        name: 'ipc_spawn (script, listen) p99',
        value: round(s.p99, 3),
        unit: 'ms',
        baseline: round(f.p99, 3),
        ratio: round(s.p99 / f.p99, 1),
        note: `max ${round(s.max, 1)} ms`,
      },
    ];
  } finally {
    await warren.close();
  }
}

export const kernelBenches = { publishLatency, spawnOverhead, publishLatencyPostgres, postgresKnee };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  const rows: BenchRow[] = [];
  for (const bench of Object.values(kernelBenches)) rows.push(...(await bench()));
  console.log(formatRows(rows));
}
