/**
 * Coordinator benchmarks (`npm run bench -- coordinator`), each with a baseline measured in
 * the same run:
 *
 * - coordinatorSpawn: agent_spawn from 20 concurrent callers against one zone (the zone's
 *   lock), SQLite and PostgreSQL, vs the kernel's own `spawn` under the same contention.
 * - coordinatorInvocations: enqueue → the target sees it running → invocation_complete,
 *   round trip p50/p99 one at a time, and throughput with 8 concurrent clients; baseline:
 *   enqueue → invocation_get (no delivery, no agent).
 * - coordinatorOutbox: events/s through the publisher to Redis and to NATS JetStream, and
 *   commit → published p50/p99; baseline: the same events written straight with XADD.
 */
import { join } from 'node:path';
import type { Coordinator } from '../src/plugins/coordinator/coordinator.ts';
import { enqueue } from '../src/plugins/coordinator/outbox.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { operator } from '../src/vocab/principal.ts';
import { round, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import { type BenchRow, dropSchema } from './store.ts';

/** The coordinator's own tables: events are enqueued in its unit, as its syscalls do. */
const outbox = (w: Warren) => w.plugins.get<Coordinator>('coordinator').tables;

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs
type Any = any;

const PG_URL = process.env.WARREN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.WARREN_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const NATS_URL = process.env.WARREN_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const op = operator();
const big = { maxDepth: 10, maxChildren: 10, maxPerZone: 100_000, maxPerApplication: 100_000 };
const kernelLimits = { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 100_000 };
const idle = { script: { steps: [{ listen: {} }] } };

async function open(kind: 'sqlite' | 'postgres', dir: string, coordinator: Record<string, unknown> = {}) {
  const schema = `bench_${Math.random().toString(36).slice(2, 10)}`;
  const w = await Warren.open({
    ...(kind === 'sqlite' ? { db: join(dir, 'w.db') } : { db: PG_URL, schema }),
    dataDir: dir,
    metrics: false,
    kernel: { limits: kernelLimits, reconcileIntervalMs: 60_000 },
    plugins: { config: { coordinator: { limits: big, ...coordinator } } },
  });
  return {
    w,
    async close() {
      await w.close();
      if (kind === 'postgres') await dropSchema(schema);
    },
  };
}

/** `total` calls of `fn` from `callers` concurrent callers; calls per second. */
async function rate(total: number, callers: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < total) await fn(next++);
    }),
  );
  return total / ((performance.now() - t) / 1000);
}

export async function coordinatorSpawn(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const kind of ['sqlite', 'postgres'] as const) {
    using dir = tempDir();
    const { w, close } = await open(kind, dir.dir);
    try {
      const n = 200;
      await rate(20, 20, () => w.call(op, 'ipc_spawn', { runtime: 'script', script: idle.script }));
      const kernel = await rate(n, 20, () =>
        w.call(op, 'ipc_spawn', { runtime: 'script', script: idle.script }),
      );
      const coord = await rate(n, 20, (i) =>
        w.call(op, 'agent_spawn', { zoneId: 'default', application_id: `app${i % 5}` }),
      );
      rows.push({
        name: `agent_spawn, 20 callers on one zone (${kind})`,
        value: round(coord, 0),
        unit: 'spawns/s',
        baseline: round(kernel, 0),
        ratio: round(coord / kernel, 2),
        note: `vs the kernel's spawn under the same contention; ${n} each`,
      });
    } finally {
      await close();
    }
  }
  return rows;
}

export async function coordinatorInvocations(): Promise<BenchRow[]> {
  using dir = tempDir();
  const { w, close } = await open('sqlite', dir.dir, { deadlineSweepIntervalMs: 1000 });
  const stop = { now: false };
  try {
    const a = (await w.call(op, 'agent_spawn', { zoneId: 'default', application_id: 'app' })) as Any;
    const agentId = a.agent.id as string;
    const svc = (
      (await w.call(op, 'service_register', {
        zoneId: 'default',
        agentId,
        endpoint_url: 'http://127.0.0.1:9/bench',
      })) as Any
    ).service;
    const me = { kind: 'session' as const, sessionId: agentId, zone: 'default', depth: 1 };
    // The agent: completes whatever is running for it, as fast as it sees it.
    const agent = (async () => {
      while (!stop.now) {
        const mine = (await w.call(me, 'invocation_list', { zoneId: 'default', status: 'running' })) as Any;
        for (const inv of mine.invocations) {
          await w
            .call(me, 'invocation_complete', {
              zoneId: 'default',
              id: inv.id,
              status: 'succeeded',
              result: 1,
            })
            .catch(() => {});
        }
        if (mine.invocations.length === 0) await new Promise((r) => setTimeout(r, 1));
      }
    })();
    let k = 0;
    const roundTrip = async () => {
      const inv = (
        (await w.call(op, 'invocation_enqueue', {
          zoneId: 'default',
          service_id: svc.id,
          idempotency_key: `k${k++}`,
          method: 'ping',
        })) as Any
      ).invocation;
      for (;;) {
        const r = (await w.call(op, 'invocation_get', { zoneId: 'default', id: inv.id })) as Any;
        if (r.invocation.status === 'succeeded') return;
        await new Promise((res) => setTimeout(res, 1));
      }
    };
    const enqueueOnly = async () => {
      const inv = (
        (await w.call(op, 'invocation_enqueue', {
          zoneId: 'default',
          service_id: svc.id,
          idempotency_key: `b${k++}`,
          method: 'noop',
        })) as Any
      ).invocation;
      await w.call(op, 'invocation_get', { zoneId: 'default', id: inv.id });
    };
    const times = async (n: number, fn: () => Promise<void>) => {
      const ms: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await fn();
        ms.push(performance.now() - t);
      }
      return summary(ms);
    };
    await times(10, roundTrip);
    const rt = await times(150, roundTrip);
    const base = await times(150, enqueueOnly);
    const tput = await rate(300, 8, () => roundTrip());
    stop.now = true;
    await agent;
    return [
      {
        name: 'invocation round trip (enqueue → agent → complete), p50',
        value: round(rt.p50, 2),
        unit: 'ms',
        baseline: round(base.p50, 2),
        ratio: round(rt.p50 / base.p50, 2),
        note: `p99 ${round(rt.p99, 2)} ms; baseline enqueue + get p50 ${round(base.p50, 2)} / p99 ${round(base.p99, 2)} ms; SQLite, ${rt.n} one at a time`,
      },
      {
        name: 'invocation round trips, 8 concurrent clients',
        value: round(tput, 0),
        unit: 'inv/s',
        note: '300 in all',
      },
    ];
  } finally {
    stop.now = true;
    await close();
  }
}

export async function coordinatorOutbox(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const { createClient } = await import('redis');
  const prefix = `bench${Math.random().toString(36).slice(2, 8)}.`;
  const stream = `BENCH${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
  const n = 2000;
  const redis = createClient({ url: REDIS_URL });
  redis.on('error', () => {});
  await redis.connect();
  try {
    // Baseline: the same number of XADDs, one after another, straight to Redis.
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await redis.xAdd(`${prefix}raw`, '*', { id: `e${i}`, payload: '{}' });
    const raw = n / ((performance.now() - t0) / 1000);
    for (const [name, sink] of [
      ['Redis', { type: 'redis', url: REDIS_URL }],
      ['NATS JetStream', { type: 'nats', servers: NATS_URL, stream }],
    ] as const) {
      using dir = tempDir();
      const { w, close } = await open('sqlite', dir.dir, {
        outbox: { intervalMs: 3_600_000, batchSize: 500, topicPrefix: prefix, sinks: [sink] },
      });
      try {
        for (let i = 0; i < n; i += 100) {
          await outbox(w).write((tx) =>
            enqueue(
              tx,
              w.kernel.ids,
              Array.from({ length: 100 }, (_, j) => ({
                zone: 'default',
                topic: 'caracal.sessions.revoke',
                key: `k${(i + j) % 50}`,
                type: 'bench',
                payload: { i: i + j },
              })),
            ),
          );
        }
        const c = w.plugins.get<Any>('coordinator');
        const t = performance.now();
        while (true) {
          const p = await c.publisher.pass();
          if (p.delivered === 0) break;
        }
        const perSec = n / ((performance.now() - t) / 1000);
        // Commit → published, one event at a time (each published as soon as it commits).
        const lat: number[] = [];
        for (let i = 0; i < 100; i++) {
          const t1 = performance.now();
          await outbox(w).write((tx) =>
            enqueue(tx, w.kernel.ids, [
              {
                zone: 'default',
                topic: 'caracal.sessions.revoke',
                key: 'lat',
                type: 'bench',
                payload: { i },
              },
            ]),
          );
          await c.publisher.pass();
          lat.push(performance.now() - t1);
        }
        const s = summary(lat);
        rows.push({
          name: `outbox → ${name}`,
          value: round(perSec, 0),
          unit: 'events/s',
          baseline: round(raw, 0),
          ratio: round(perSec / raw, 2),
          note: `commit → published p50 ${round(s.p50, 2)} ms, p99 ${round(s.p99, 2)} ms; baseline: sequential XADD; ${n} events, 50 keys, batches of 500`,
        });
      } finally {
        await close();
      }
    }
  } finally {
    await redis.del([`${prefix}raw`, `${prefix}caracal.sessions.revoke`]).catch(() => {});
    await redis.close();
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS_URL });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => {});
    await nc.close();
  }
  return rows;
}

export const coordinatorBenches = { coordinatorSpawn, coordinatorInvocations, coordinatorOutbox };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  const rows: BenchRow[] = [];
  // `tsx bench/coordinator.ts coordinatorOutbox` runs the named ones only.
  const only = process.argv.slice(2);
  for (const [name, bench] of Object.entries(coordinatorBenches))
    if (only.length === 0 || only.includes(name)) rows.push(...(await bench()));
  console.log(formatRows(rows));
}
