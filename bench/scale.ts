/**
 * Scale benchmarks: does an operation cost what it touches, or what the world holds?
 * Run this file on its own (`npx tsx bench/scale.ts`) to print its rows.
 *
 * - scaleLog: the operations that read no history (spawn, fd list, ps, write, read at a
 *   cursor, restart to serving) with 1k, 100k and 1M events in the log and the same ten
 *   idle sessions; the 1M figures against the 1k ones of the same run (goal: within 1.2×).
 * - scaleSessions: 10, 1,000 and 10,000 live idle script sessions → spawn p50/p99 (goal
 *   at 10,000 within 1.5× of 10), fd list, ps, a reconcile tick with nothing to do (goal
 *   ≤ 5 ms), the process's RSS (goal ≤ 1 GiB); then 1M events added and a real
 *   `warren serve` on that data dir killed and restarted (goal: serving within 2 s).
 *
 * Spawning is slow today, so every phase has a time bound and reports how far it got.
 */
import { join } from 'node:path';
import { Warren } from '../src/warren.ts';
import { fillLog } from './lib/fill.ts';
import { restartToServing } from './lib/server.ts';
import { growTo, op, roomyKernel, spawnIdle, spawnKillCycle } from './lib/sessions.ts';
import { load1, mib, round, type Summary, summary, timeEach, timeWithin } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const fmt = (n: number) => n.toLocaleString('en-US');
const dbOf = (dir: string) => join(dir, 'warren.db');
const median = (xs: Array<number | undefined>) => {
  const ok = xs.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
  return ok.length === 0 ? undefined : ok[Math.floor(ok.length / 2)];
};

// ---------------------------------------------------------------- the log's size

interface LogLevel {
  events: number;
  head: number;
  open: number;
  spawn: Summary;
  /** Undefined when skipped: `fdsPredicted` says how long it would have taken. */
  fds: Summary | undefined;
  fdsPredicted?: number;
  ps: Summary;
  write: Summary;
  read: Summary;
  restart: number | undefined;
  load: string;
}

const ROOMS_PER_LEVEL = 10;
/** A call predicted to take longer than this is skipped and reported as such. */
const SLOW_CALL_MS = 20_000;

/**
 * One level: open the warren (its ten sessions resume), time the operations, close it, and
 * time a real server's restart to serving on the same data dir. Writes and reads go to rooms
 * that stayed quiet while the log grew: the read at the fd's cursor is the case where a
 * planner that walks the log instead of the stream's index shows.
 */
async function measureLevel(
  dir: string,
  events: number,
  rooms: Array<[string, number]>,
  opts: ScaleOpts,
  prev: LogLevel | undefined,
): Promise<LogLevel> {
  const t0 = performance.now();
  const warren = await Warren.open({ dataDir: dir, kernel: roomyKernel(true) });
  const open = performance.now() - t0;
  const load = load1();
  try {
    const head = await warren.store.log.head();
    const spawn = await timeEach(opts.samples, () => spawnKillCycle(warren), 5);
    // One fd list call can take minutes today and cannot be cut short: skip it where the
    // last level's figure, grown in proportion to the log, says it would pass the bound.
    const fdsPredicted = prev?.fds ? (prev.fds.p50 * events) / prev.events : 0;
    const fds =
      prev && !prev.fds
        ? undefined
        : fdsPredicted > SLOW_CALL_MS
          ? undefined
          : await timeWithin(20, 5000, () => warren.call(op, 'ipc_list_fds', {}));
    const ps = await timeWithin(20, 5000, () => warren.call(op, 'ps', {}));
    const writeMs: number[] = [];
    const readMs: number[] = [];
    for (const [name, fd] of rooms) {
      let t = performance.now();
      await warren.call(op, 'ipc_write', { fd, message: `hello ${name}` });
      writeMs.push(performance.now() - t);
      t = performance.now();
      const got = (await warren.call(op, 'ipc_read', { fd })) as { messages: unknown[] };
      readMs.push(performance.now() - t);
      if (got.messages.length !== 1) throw new Error(`read ${got.messages.length} messages on ${name}`);
    }
    await warren.store.writer.drained();
    const res = {
      events,
      head,
      open,
      spawn,
      fds,
      ...(fds ? {} : { fdsPredicted: fdsPredicted || (prev?.fdsPredicted ?? 0) * (events / prev!.events) }),
      ps,
      write: summary(writeMs),
      read: summary(readMs),
      load,
    };
    await warren.close();
    // Slow restarts: one sample, not the median of three, to keep the run bounded.
    const restarts = (prev?.restart ?? 0) > 8000 ? 1 : 3;
    const r = await restartToServing(dir, { restarts, boundMs: opts.restartBoundMs });
    return { ...res, restart: median(r.restarts) };
  } catch (error) {
    await warren.close();
    throw error;
  }
}

export interface ScaleOpts {
  /** Spawn samples per level. */
  samples: number;
  /** Bound on each server start. */
  restartBoundMs: number;
  /** Bound on growing the live population, all checkpoints together. */
  growBoundMs: number;
  /** Populations measured (the first is the baseline). */
  populations: number[];
  /** Log sizes measured (the first is the baseline). */
  logSizes: number[];
}

const defaults: ScaleOpts = {
  samples: 30,
  restartBoundMs: 30_000,
  growBoundMs: 180_000,
  populations: [10, 1_000, 10_000],
  logSizes: [1_000, 100_000, 1_000_000],
};

export async function scaleLog(o: Partial<ScaleOpts> = {}): Promise<BenchRow[]> {
  const opts = { ...defaults, ...o };
  using tmp = tempDir();
  // The world: ten idle sessions and the rooms each level writes to, then the levels.
  const rooms = opts.logSizes.flatMap((_, l) =>
    Array.from({ length: ROOMS_PER_LEVEL }, (_, k) => `quiet-${l}-${k}`),
  );
  const roomFds: Array<[string, number]> = [];
  const setup = await Warren.open({ dataDir: tmp.dir, kernel: roomyKernel(true) });
  try {
    for (let i = 0; i < 10; i++) await spawnIdle(setup);
    for (const name of rooms) {
      const room = (await setup.call(op, 'streams_create', { name, selfEcho: true })) as { fd: number };
      roomFds.push([name, room.fd]);
    }
  } finally {
    await setup.close();
  }
  const levels: LogLevel[] = [];
  for (const [l, size] of opts.logSizes.entries()) {
    const t = performance.now();
    const added = fillLog(dbOf(tmp.dir), size);
    process.stderr.write(`  log: +${fmt(added)} events in ${round((performance.now() - t) / 1000, 1)} s\n`);
    const slice = roomFds.slice(l * ROOMS_PER_LEVEL, (l + 1) * ROOMS_PER_LEVEL);
    levels.push(await measureLevel(tmp.dir, size, slice, opts, levels.at(-1)));
  }
  return logRows(levels);
}

function logRows(levels: LogLevel[]): BenchRow[] {
  const base = levels[0]!;
  const label = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);
  const each = (get: (l: LogLevel) => number | undefined, digits = 3) =>
    levels.map((l) => `${label(l.events)} ${get(l) === undefined ? '—' : round(get(l)!, digits)}`).join(', ');
  /** The biggest log with a figure against the smallest; skipped levels are named in the note. */
  const row = (what: string, get: (l: LogLevel) => number | undefined, extra = ''): BenchRow => {
    const top = levels.findLast((l) => get(l) !== undefined) ?? base;
    const name = `${what}, ${label(top.events)} vs ${label(base.events)} events`;
    const v = get(top);
    const b = get(base);
    if (v === undefined || b === undefined)
      return {
        name,
        value: Number.NaN,
        unit: 'ms',
        note: `FAILED: no answer within the bound; ${each(get)}`,
      };
    const skipped = levels.filter((l) => get(l) === undefined && l.fdsPredicted);
    const skip = skipped.map(
      (l) =>
        `; not run at ${label(l.events)}: predicted ${round((l.fdsPredicted ?? 0) / 1000, 0)} s from the level before`,
    );
    return {
      name,
      value: round(v, 3),
      unit: 'ms',
      baseline: round(b, 3),
      ratio: round(v / b, 2),
      // Goal: within 1.2× of the small log, as a ceiling on the value.
      max: round(1.2 * b, 3),
      note: `goal ≤ 1.2× of ${label(base.events)}; ${each(get)} ms${extra}${skip.join('')}`,
    };
  };
  const loads = levels.map((l) => l.load).join('/');
  return [
    row(
      'spawn p50',
      (l) => l.spawn.p50,
      `; p99 ${each((l) => l.spawn.p99)}; ${base.spawn.n} spawn+kill cycles each`,
    ),
    row('ipc_list_fds p50', (l) => l.fds?.p50),
    row('ps p50', (l) => l.ps.p50),
    row('ipc_write p50', (l) => l.write.p50, `; ${ROOMS_PER_LEVEL} rooms quiet while the log grew`),
    row('ipc_read at cursor p50', (l) => l.read.p50, `; p99 ${each((l) => l.read.p99)}`),
    row(
      'restart to serving (warren serve, kill -9)',
      (l) => l.restart,
      `; median of 3 (1 where the level before took > 8 s); in-process Warren.open ${each((l) => l.open, 0)} ms; load ${loads}`,
    ),
  ];
}

// ---------------------------------------------------------------- live sessions

/** The operator's fd list at the biggest population where it ran. */
function fdsRow(pops: Population[]): BenchRow {
  const base = pops[0]!;
  const top = pops.findLast((p) => p.fds) ?? base;
  const skipped = pops.find((p) => !p.fds);
  const each = pops.map((p) => `${fmt(p.live)}: ${p.fds ? round(p.fds.p50, 3) : '—'}`).join(', ');
  return {
    name: `ipc_list_fds (operator, all fds) at ${fmt(top.live)} live`,
    unit: 'ms',
    value: round(top.fds!.p50, 3),
    baseline: round(base.fds!.p50, 3),
    ratio: round(top.fds!.p50 / base.fds!.p50, 2),
    note: `p50; the operator holds 2 fds per session; ${each} ms${skipped ? `; not run at ${fmt(skipped.live)}: predicted ${round((skipped.fdsPredicted ?? 0) / 1000, 0)} s` : ''}`,
  };
}

interface Population {
  live: number;
  spawn: Summary;
  /** Undefined when skipped: `fdsPredicted` says how long it would have taken. */
  fds: Summary | undefined;
  fdsPredicted?: number;
  ps: Summary;
  tick: Summary;
  rss: number;
  load: string;
}

async function measurePopulation(
  warren: Warren,
  live: number,
  samples: number,
  prev: Population | undefined,
): Promise<Population> {
  await warren.store.writer.drained();
  const spawn = await timeEach(samples, () => spawnKillCycle(warren), 3);
  // The operator's fd list is one call of minutes at thousands of sessions today: skip it
  // where the last figure, grown with the square of the population (fds × a per-fd cost that
  // grew with them in the "before" run), passes the bound.
  const fdsPredicted = prev?.fds ? prev.fds.p50 * (live / prev.live) ** 2 : 0;
  const fds =
    prev && !prev.fds
      ? undefined
      : fdsPredicted > SLOW_CALL_MS
        ? undefined
        : await timeWithin(10, 5000, () => warren.call(op, 'ipc_list_fds', {}));
  const ps = await timeWithin(10, 5000, () => warren.call(op, 'ps', {}));
  // A tick with nothing to do: one untimed first (it flushes what spawning left behind).
  await warren.kernel.reconcile();
  await warren.store.writer.drained();
  const tick = await timeWithin(10, 5000, () => warren.kernel.reconcile());
  return {
    live,
    spawn,
    fds,
    ...(fds ? {} : { fdsPredicted }),
    ps,
    tick,
    rss: process.memoryUsage().rss,
    load: load1(),
  };
}

export async function scaleSessions(o: Partial<ScaleOpts> = {}): Promise<BenchRow[]> {
  const opts = { ...defaults, ...o };
  const target = opts.populations.at(-1)!;
  using tmp = tempDir();
  using empty = tempDir();
  const warren = await Warren.open({ dataDir: tmp.dir, kernel: roomyKernel(true) });
  const pops: Population[] = [];
  let live = 0;
  const t0 = performance.now();
  const deadline = t0 + opts.growBoundMs;
  const reachedAt: string[] = [];
  try {
    for (const n of opts.populations) {
      // The spawn-kill cycles of a measurement are not counted in the bound.
      const before = performance.now();
      live = await growTo(warren, live, n, deadline);
      reachedAt.push(`${fmt(live)} in ${round((performance.now() - t0) / 1000, 0)} s`);
      process.stderr.write(
        `  sessions: ${fmt(live)} live (${round((performance.now() - before) / 1000, 1)} s)\n`,
      );
      pops.push(await measurePopulation(warren, live, opts.samples, pops.at(-1)));
      if (live < n) break;
    }
  } finally {
    const t = performance.now();
    await warren.close();
    process.stderr.write(`  sessions: closed in ${round((performance.now() - t) / 1000, 1)} s\n`);
  }
  const growMs = performance.now() - t0;
  // The restart: the same data dir with a big log, a real server killed and started again;
  // its baseline, the same on an empty data dir.
  const events = opts.logSizes.at(-1)!;
  fillLog(dbOf(tmp.dir), events);
  const restart = await restartToServing(tmp.dir, { restarts: 1, boundMs: opts.restartBoundMs });
  const emptyRestart = await restartToServing(empty.dir, { restarts: 3, boundMs: opts.restartBoundMs });
  return sessionRows(pops, target, growMs, reachedAt, restart, median(emptyRestart.restarts), events, opts);
}

function sessionRows(
  pops: Population[],
  target: number,
  growMs: number,
  reachedAt: string[],
  restart: { first: number | undefined; restarts: Array<number | undefined> },
  emptyRestart: number | undefined,
  events: number,
  opts: ScaleOpts,
): BenchRow[] {
  const base = pops[0]!;
  const top = pops.at(-1)!;
  const reached = top.live >= target;
  const at = reached ? `${fmt(top.live)} live` : `${fmt(top.live)} live (${fmt(target)} not reached)`;
  const each = (get: (p: Population) => number, digits = 3) =>
    pops.map((p) => `${fmt(p.live)}: ${round(get(p), digits)}`).join(', ');
  const vsBase = (get: (p: Population) => number) => ({
    value: round(get(top), 3),
    baseline: round(get(base), 3),
    ratio: round(get(top) / get(base), 2),
  });
  const loads = pops.map((p) => p.load).join('/');
  const rows: BenchRow[] = [
    {
      name: `live idle script sessions spawned within ${opts.growBoundMs / 1000} s`,
      value: top.live,
      unit: 'sessions',
      goal: target,
      note: `reached ${reachedAt.join('; ')} (4 spawns in flight; measurements not counted); ${round(growMs / 1000, 0)} s in all; load ${loads}`,
    },
    {
      name: `spawn p50 at ${at} vs ${fmt(base.live)}`,
      unit: 'ms',
      ...vsBase((p) => p.spawn.p50),
      ...(reached ? { max: round(1.5 * base.spawn.p50, 3) } : {}),
      note: `goal ≤ 1.5× of ${fmt(base.live)} live; ${each((p) => p.spawn.p50)} ms; ${base.spawn.n} spawn+kill cycles each`,
    },
    {
      name: `spawn p99 at ${at} vs ${fmt(base.live)}`,
      unit: 'ms',
      ...vsBase((p) => p.spawn.p99),
      note: `${each((p) => p.spawn.p99)} ms`,
    },
    fdsRow(pops),
    {
      name: `ps at ${at}`,
      unit: 'ms',
      ...vsBase((p) => p.ps.p50),
      note: `p50; lists every live session; ${each((p) => p.ps.p50)} ms`,
    },
    {
      name: `reconcile tick, nothing changed, at ${at}`,
      unit: 'ms',
      ...vsBase((p) => p.tick.p50),
      ...(reached ? { max: 5 } : {}),
      note: `p50 of ${top.tick.n}; ${each((p) => p.tick.p50)} ms`,
    },
    {
      name: `RSS of the process with ${at}`,
      unit: 'MiB',
      value: mib(top.rss),
      baseline: mib(base.rss),
      ratio: round(top.rss / base.rss, 2),
      ...(reached ? { max: 1024 } : {}),
      note: `the bench process (kernel, store, agents); ${each((p) => p.rss / 1024 / 1024, 0)} MiB; ~${round((top.rss - base.rss) / 1024 / Math.max(1, top.live - base.live), 0)} KiB per extra session`,
    },
  ];
  // No answer within the bound: the bound is the value (a lower bound), and a MISS.
  const bound = opts.restartBoundMs;
  const r = restart.restarts[0];
  const first =
    restart.first === undefined ? `no answer in ${bound / 1000} s` : `${round(restart.first, 0)} ms`;
  rows.push({
    name: `restart to serving, ${fmt(top.live)} idle sessions + ${fmt(events)} events`,
    value: round(r ?? bound, 0),
    unit: 'ms',
    ...(emptyRestart !== undefined
      ? { baseline: round(emptyRestart, 0), ratio: round((r ?? bound) / emptyRestart, 1) }
      : {}),
    max: 2000,
    note: `${r === undefined ? `no /healthz within ${bound / 1000} s (value is the bound); ` : ''}warren serve killed with SIGKILL, started again, until /healthz answers; its first start: ${first}; baseline: the same on an empty data dir (median of 3)`,
  });
  return rows;
}

export const scaleBenches = { scaleLog, scaleSessions };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  const rows: BenchRow[] = [];
  for (const bench of Object.values(scaleBenches)) rows.push(...(await bench()));
  console.log(formatRows(rows));
}
