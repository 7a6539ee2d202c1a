/**
 * Load benchmark: turn throughput with real listening agents. Run this file on its own
 * (`npx tsx bench/load.ts`) to print its rows.
 *
 * 200 script sessions listen on 50 operator rooms (4 per room, async fds); each answers
 * every input with one line of output. The operator writes to the rooms round-robin with
 * `ipc_write` at 250, 500, 1,000 and 2,000 messages/s offered (open loop) for a bounded
 * time each. Per rate: the achieved rate (messages every listener got), publish → deliver
 * p50/p99 (the write issued → the listener's `session.input` event committed, for every
 * message × listener), and the events the log gains per message. Goal: 1,000 msg/s
 * sustained with p99 ≤ 50 ms; the knee is the first rate whose p99 passes 100 ms.
 * Baseline, same run: the same writes to the same rooms with no listeners (write → ack).
 */
import { Warren } from '../src/syscalls/warren.ts';
import { DeliveryWatch } from './lib/deliveries.ts';
import { pacedIssue, settledWithin } from './lib/paced.ts';
import { op, roomyKernel } from './lib/sessions.ts';
import { load1, round, type Summary, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

export interface LoadOpts {
  rates: number[];
  rooms: number;
  perRoom: number;
  /** How long each rate is offered. */
  windowMs: number;
  /** After the window, how long deliveries may still arrive before the rest count as late. */
  drainMs: number;
  /** How long each no-listener baseline rate is offered. */
  baselineMs: number;
}

const defaults: LoadOpts = {
  rates: [250, 500, 1000, 2000],
  rooms: 50,
  perRoom: 4,
  windowMs: 10_000,
  drainMs: 10_000,
  baselineMs: 5_000,
};

const LISTENER = { steps: [{ listen: { say: 'got ${input.text}' } }] };

interface Phase {
  rate: number;
  written: number;
  acked: Summary;
  /** Messages every listener got, per second, over the window (or until the last delivery). */
  achieved: number;
  latency: Summary;
  late: number;
  deliveries: number;
  eventsPerMessage: number;
  breakdown: string;
  /** Writer transactions (batches) committed during the phase, per message written. */
  batchesPerMessage: number;
  /** Mean writer batch: units and events. */
  unitsPerBatch: number;
  eventsPerBatch: number;
  /** CPU time of this process (user + system) per message written. */
  cpuMsPerMessage: number;
  load: string;
}

async function openRooms(dir: string, rooms: number): Promise<{ warren: Warren; fds: number[] }> {
  const warren = await Warren.open({ dataDir: dir, kernel: roomyKernel(false) });
  const fds: number[] = [];
  for (let r = 0; r < rooms; r++) {
    const room = (await warren.call(op, 'streams_create', { name: `room-${r}` })) as { fd: number };
    fds.push(room.fd);
  }
  return { warren, fds };
}

/**
 * Offer `rate` writes/s for `ms`, round-robin over the rooms; returns per-message issue
 * times and seqs (0 until acknowledged) and the acknowledgement latencies.
 */
async function offer(warren: Warren, fds: number[], rate: number, ms: number, tag: string) {
  const n = Math.round((rate * ms) / 1000);
  const sent = new Float64Array(n);
  const seqs = new Float64Array(n);
  const acks: number[] = [];
  const t0 = performance.now();
  const { calls } = await pacedIssue(rate, ms, async (i) => {
    sent[i] = performance.now();
    const res = (await warren.call(op, 'ipc_write', { fd: fds[i % fds.length]!, message: `${tag}${i}` })) as {
      seq: number;
    };
    seqs[i] = res.seq;
    acks.push(performance.now() - sent[i]!);
  });
  return { n, sent, seqs, acks, calls, t0 };
}

/** The same writes with no listeners: the floor under a delivery, at each rate. */
async function baselinePhase(rate: number, opts: LoadOpts): Promise<{ acked: Summary; achieved: number }> {
  using tmp = tempDir();
  const { warren, fds } = await openRooms(tmp.dir, opts.rooms);
  try {
    await offer(warren, fds, rate, 500, 'w').then((o) => Promise.all(o.calls));
    const o = await offer(warren, fds, rate, opts.baselineMs, 'm');
    await settledWithin(o.calls, opts.drainMs);
    const took = Math.max(opts.baselineMs, performance.now() - o.t0);
    return { acked: summary(o.acks), achieved: (o.acks.length / took) * 1000 };
  } finally {
    await warren.close();
  }
}

async function listenerPhase(rate: number, opts: LoadOpts): Promise<Phase> {
  using tmp = tempDir();
  const { warren, fds } = await openRooms(tmp.dir, opts.rooms);
  const watch = new DeliveryWatch(warren);
  try {
    for (let r = 0; r < opts.rooms; r++) {
      for (let k = 0; k < opts.perRoom; k++) {
        const s = (await warren.call(op, 'ipc_spawn', {
          runtime: 'script',
          script: LISTENER,
          pipe: 'detach',
        })) as {
          session: { id: string };
        };
        await warren.call(op, 'streams_attach', {
          session: s.session.id,
          stream: `room-${r}`,
          permission: 'r',
          mode: 'async',
        });
      }
    }
    // Warm-up: one message per room, all of it delivered, then count afresh.
    const warm = await offer(warren, fds, 100, (opts.rooms / 100) * 1000, 'w');
    await settledWithin(warm.calls, opts.drainMs);
    const until = performance.now() + opts.drainMs;
    while (watch.deliveries < warm.n * opts.perRoom && performance.now() < until) await tick(20);
    await warren.store.writer.drained();
    watch.reset();

    const load = load1();
    const batches = { n: 0, units: 0, events: 0 };
    const offBatch = warren.store.writer.onBatch((b) => {
      batches.n++;
      batches.units += b.units;
      batches.events += b.events;
    });
    const cpu0 = process.cpuUsage();
    const o = await offer(warren, fds, rate, opts.windowMs, 'm');
    const expected = o.n * opts.perRoom;
    const end = o.t0 + opts.windowMs + opts.drainMs;
    while (watch.deliveries < expected && performance.now() < end) await tick(20);
    await settledWithin(o.calls, Math.max(0, end - performance.now()));
    const stoppedAt = performance.now();
    // The turns' tails (output, idle) land just after the inputs: let them in before counting.
    await tick(200);
    await warren.store.writer.drained();
    const cpu = process.cpuUsage(cpu0);
    offBatch();

    const latencies: number[] = [];
    let late = 0;
    let complete = 0;
    for (let i = 0; i < o.n; i++) {
      const times = o.seqs[i] ? (watch.inputs.get(o.seqs[i]!) ?? []) : [];
      for (const t of times) latencies.push(t - o.sent[i]!);
      // Not delivered when the phase ended: counted at the time waited, a lower bound.
      for (let k = times.length; k < opts.perRoom; k++) {
        latencies.push(stoppedAt - o.sent[i]!);
        late++;
      }
      if (times.length >= opts.perRoom) complete++;
    }
    const took = Math.max(opts.windowMs, (watch.lastDelivery || stoppedAt) - o.t0);
    const delivered = watch.deliveries / opts.perRoom;
    return {
      rate,
      written: o.acks.length,
      acked: summary(o.acks),
      achieved: (complete / took) * 1000,
      latency: summary(latencies),
      late,
      deliveries: watch.deliveries,
      eventsPerMessage: watch.events / Math.max(1, delivered),
      breakdown: watch.breakdown(Math.max(1, delivered)),
      batchesPerMessage: batches.n / Math.max(1, o.n),
      unitsPerBatch: batches.units / Math.max(1, batches.n),
      eventsPerBatch: batches.events / Math.max(1, batches.n),
      cpuMsPerMessage: (cpu.user + cpu.system) / 1000 / Math.max(1, o.n),
      load,
    };
  } finally {
    watch.stop();
    const t = performance.now();
    await warren.close();
    process.stderr.write(`  load ${rate}/s: closed in ${round((performance.now() - t) / 1000, 1)} s\n`);
  }
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function loadRooms(o: Partial<LoadOpts> = {}): Promise<BenchRow[]> {
  const opts = { ...defaults, ...o };
  const listeners = opts.rooms * opts.perRoom;
  const rows: BenchRow[] = [];
  let knee: number | undefined;
  for (const rate of opts.rates) {
    const base = await baselinePhase(rate, opts);
    const p = await listenerPhase(rate, opts);
    process.stderr.write(
      `  load ${rate}/s: achieved ${round(p.achieved, 0)}/s, p50 ${round(p.latency.p50, 1)} ms, p99 ${round(p.latency.p99, 1)} ms\n`,
    );
    if (knee === undefined && p.latency.p99 > 100) knee = rate;
    const label = `load ${listeners} listeners/${opts.rooms} rooms, ${rate.toLocaleString('en-US')} msg/s`;
    const goalRate = rate === 1000;
    rows.push(
      {
        name: `${label}: achieved`,
        value: round(p.achieved, 0),
        unit: 'msg/s',
        baseline: round(base.achieved, 0),
        ratio: round(p.achieved / base.achieved, 2),
        ...(goalRate ? { goal: 0.95 } : {}),
        note: `messages every listener got, per s of the ${opts.windowMs / 1000} s window (or until the last delivery); ${p.written} of ${Math.round((rate * opts.windowMs) / 1000)} writes acknowledged (ack p50/p99 ${round(p.acked.p50, 1)}/${round(p.acked.p99, 1)} ms); baseline: the same writes, no listeners; load ${p.load}`,
      },
      {
        name: `${label}: publish→deliver p50`,
        value: round(p.latency.p50, 2),
        unit: 'ms',
        baseline: round(base.acked.p50, 3),
        ratio: round(p.latency.p50 / base.acked.p50, 1),
        note: `write issued → the listener's session.input committed, ${p.latency.n} message×listener pairs; baseline: write → ack with no listeners`,
      },
      {
        name: `${label}: publish→deliver p99`,
        value: round(p.latency.p99, 2),
        unit: 'ms',
        baseline: round(base.acked.p99, 3),
        ratio: round(p.latency.p99 / base.acked.p99, 1),
        ...(goalRate ? { max: 50 } : {}),
        note: `max ${round(p.latency.max, 0)} ms; ${p.late} of ${p.latency.n} not delivered ${opts.drainMs / 1000} s after the window (counted at the time waited)`,
      },
      {
        name: `${label}: log events per delivered message`,
        value: round(p.eventsPerMessage, 1),
        unit: 'events',
        note: `${p.breakdown} (per message written; ${opts.perRoom} listener turns each)`,
      },
      {
        name: `${label}: CPU per message`,
        value: round(p.cpuMsPerMessage, 3),
        unit: 'ms',
        note: `this process, user + system, over the phase, per message written; writer: ${round(p.batchesPerMessage, 2)} transactions per message, ${round(p.unitsPerBatch, 1)} units and ${round(p.eventsPerBatch, 1)} events per transaction`,
      },
    );
  }
  rows.push({
    name: `load knee (first offered rate with p99 > 100 ms)`,
    value: knee ?? Number.NaN,
    unit: 'msg/s',
    note:
      knee === undefined
        ? `p99 ≤ 100 ms at every rate up to ${opts.rates.at(-1)!.toLocaleString('en-US')} msg/s`
        : `rates tried: ${opts.rates.join(', ')} msg/s`,
  });
  return rows;
}

export const loadBenches = { loadRooms };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  console.log(formatRows(await loadRooms()));
}
