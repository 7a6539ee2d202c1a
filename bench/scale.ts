/**
 * Scale benchmarks: does an operation cost what it touches, or what the world holds?
 * Run this file on its own (`npx tsx bench/scale.ts`) to print its rows.
 *
 * - scaleLog: the operations that read no history (spawn, fd list, ps, write, read at a
 *   cursor, restart to serving) with 1k, 100k and 1M events in the log and ten idle
 *   sessions, one data dir per size, all open at once and timed in turn, call by call; the
 *   1M figures against the 1k ones of the same run (goal: within 1.2×).
 * - scaleSessions: 10, 1,000 and 10,000 live idle script sessions → spawn p50/p99 (goal
 *   at 10,000 within 1.5× of 10), fd list, ps, a reconcile tick with nothing to do (goal
 *   ≤ 5 ms), the process's RSS (goal ≤ 1 GiB); then 1M events added and a real
 *   `warren serve` on that data dir killed and restarted (goal: serving within 2 s).
 *
 * Spawning is slow today, so every phase has a time bound and reports how far it got.
 */
import { join } from 'node:path';
import { Warren } from '../src/syscalls/warren.ts';
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
  /** Undefined when skipped (see SLOW_BEFORE_MS). */
  fds: Summary | undefined;
  ps: Summary;
  write: Summary;
  read: Summary;
  restart: number | undefined;
  load: string;
}

const ROOMS_PER_LEVEL = 30;
/**
 * An operator's fd list took minutes before it was paged, and a call cannot be cut short:
 * a bigger size (or population) is skipped once one call took this long at a smaller one.
 * The rows say so.
 */
const SLOW_BEFORE_MS = 500;
const slowBefore = (prev: { fds: Summary | undefined } | undefined): boolean =>
  prev !== undefined && (prev.fds === undefined || prev.fds.p50 > SLOW_BEFORE_MS);

/** One log size's world: its data dir and the quiet rooms its writes and reads go to. */
interface World {
  events: number;
  dir: string;
  rooms: Array<[string, number]>;
}

/** Ten idle sessions and the quiet rooms, then the log filled to `events`. */
async function buildWorld(dir: string, events: number): Promise<World> {
  const rooms: Array<[string, number]> = [];
  const setup = await Warren.open({ dataDir: dir, kernel: roomyKernel(true) });
  try {
    for (let i = 0; i < 10; i++) await spawnIdle(setup);
    for (let k = 0; k < ROOMS_PER_LEVEL; k++) {
      const name = `quiet-${k}`;
      const room = (await setup.call(op, 'streams_create', { name, selfEcho: true })) as { fd: number };
      rooms.push([name, room.fd]);
    }
  } finally {
    await setup.close();
  }
  const t = performance.now();
  const added = fillLog(dbOf(dir), events);
  process.stderr.write(
    `  log: ${fmt(events)} events (+${fmt(added)} in ${round((performance.now() - t) / 1000, 1)} s)\n`,
  );
  return { events, dir, rooms };
}

/** `rounds` rounds of `fn` on every warren in turn: drift in the machine hits every size alike. */
async function interleaved(
  warrens: readonly Warren[],
  rounds: number,
  fn: (w: Warren, i: number, round: number) => Promise<number>,
  warmup = 0,
): Promise<number[][]> {
  const ms: number[][] = warrens.map(() => []);
  for (let r = -warmup; r < rounds; r++) {
    for (const [i, w] of warrens.entries()) {
      const took = await fn(w, i, r);
      if (r >= 0) ms[i]!.push(took);
    }
  }
  return ms;
}

const timed = async (fn: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

/**
 * Every size's warren open at once (their ten sessions resume), each operation timed on one,
 * then the next, round after round; then each closed, and a real server's restart to serving
 * timed on each data dir in turn, three rounds. Writes and reads go to rooms that stayed
 * quiet while the log grew: the read at the fd's cursor is the case where a planner that
 * walks the log instead of the stream's index shows.
 */
async function measureLevels(worlds: readonly World[], opts: ScaleOpts): Promise<LogLevel[]> {
  const warrens: Warren[] = [];
  const open: number[] = [];
  try {
    for (const w of worlds) {
      const t = performance.now();
      warrens.push(await Warren.open({ dataDir: w.dir, kernel: roomyKernel(true) }));
      open.push(performance.now() - t);
    }
    const load = load1();
    const heads = await Promise.all(warrens.map((w) => w.store.log.head()));
    const spawn = await interleaved(warrens, opts.samples, (w) => spawnKillCycle(w), 5);
    // The fd list: once one call at a size took over SLOW_BEFORE_MS, the bigger sizes are skipped.
    const listing: Warren[] = [];
    for (const w of warrens) {
      listing.push(w);
      if ((await timed(() => w.call(op, 'ipc_list_fds', {}))) > SLOW_BEFORE_MS) break;
    }
    const fdsMs = await interleaved(listing, 20, (w) => timed(() => w.call(op, 'ipc_list_fds', {})));
    const ps = await interleaved(warrens, 20, (w) => timed(() => w.call(op, 'ps', {})));
    const write = await interleaved(warrens, ROOMS_PER_LEVEL, (w, i, r) =>
      timed(() => w.call(op, 'ipc_write', { fd: worlds[i]!.rooms[r]![1], message: `hello ${r}` })),
    );
    const read = await interleaved(warrens, ROOMS_PER_LEVEL, async (w, i, r) => {
      const t = performance.now();
      const got = (await w.call(op, 'ipc_read', { fd: worlds[i]!.rooms[r]![1] })) as { messages: unknown[] };
      const ms = performance.now() - t;
      if (got.messages.length !== 1) throw new Error(`read ${got.messages.length} messages on quiet-${r}`);
      return ms;
    });
    await Promise.all(warrens.map((w) => w.store.writer.drained()));
    const levels = worlds.map((w, i): Omit<LogLevel, 'restart'> => {
      const listed = listing.indexOf(warrens[i]!);
      return {
        events: w.events,
        head: heads[i]!,
        open: open[i]!,
        spawn: summary(spawn[i]!),
        fds: listed === -1 ? undefined : summary(fdsMs[listed]!),
        ps: summary(ps[i]!),
        write: summary(write[i]!),
        read: summary(read[i]!),
        load,
      };
    });
    await Promise.all(warrens.splice(0).map((w) => w.close()));
    // Restarts, a round over every size at a time; no answer within the bound counts as the bound.
    const restarts: number[][] = worlds.map(() => []);
    for (let r = 0; r < 3; r++) {
      for (const [i, w] of worlds.entries()) {
        const { restarts: took } = await restartToServing(w.dir, {
          restarts: 1,
          boundMs: opts.restartBoundMs,
        });
        restarts[i]!.push(took[0] ?? opts.restartBoundMs);
      }
    }
    return levels.map((l, i) => ({ ...l, restart: median(restarts[i]!) }));
  } finally {
    await Promise.all(warrens.map((w) => w.close()));
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
  const tmps = opts.logSizes.map(() => tempDir());
  try {
    const worlds: World[] = [];
    for (const [l, size] of opts.logSizes.entries()) worlds.push(await buildWorld(tmps[l]!.dir, size));
    return logRows(await measureLevels(worlds, opts));
  } finally {
    for (const t of tmps) t[Symbol.dispose]();
  }
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
    const skip = levels
      .filter((l) => get(l) === undefined && l.fds === undefined)
      .map((l) => `; not run at ${label(l.events)}: over ${SLOW_BEFORE_MS} ms at the level before`);
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
      `; median of 3, the sizes taking turns; in-process Warren.open ${each((l) => l.open, 0)} ms; load ${base.load}`,
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
    note: `p50; the operator holds 2 fds per session; ${each} ms${skipped ? `; not run at ${fmt(skipped.live)}: over ${SLOW_BEFORE_MS} ms at the population before` : ''}`,
  };
}

interface Population {
  live: number;
  spawn: Summary;
  /** Undefined when skipped (see slowBefore). */
  fds: Summary | undefined;
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
  const fds = slowBefore(prev)
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
      note: `p50; its first page (200 sessions, as the CLI asks); ${each((p) => p.ps.p50)} ms`,
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
