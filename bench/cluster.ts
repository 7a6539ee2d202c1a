/**
 * Several nodes on one PostgreSQL (docs/scaling.md), measured against the same run's own
 * baselines and against NATS JetStream on this machine:
 *
 * - cross-node publish → deliver: a write on node A wakes a blocked read on node B
 *   (LISTEN/NOTIFY, then the log by cursor), p50/p99, vs the same read on node A;
 * - aggregate append throughput with 1, 2 and 3 nodes (each a process of its own);
 * - JetStream (file storage, ack'd publish, one durable consumer, same 100-byte message):
 *   publish → consume p50/p99 and ack'd publish throughput, same concurrency;
 * - failover: from SIGKILL of a node to its sessions running on another, p50/max.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Warren } from '../src/syscalls/warren.ts';
import { operator } from '../src/vocab/principal.ts';
import { round, summary } from './lib/stats.ts';
import { type BenchRow, dropSchema } from './store.ts';

const PG_URL = process.env.WARREN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const NATS_URL = process.env.WARREN_BENCH_NATS ?? '127.0.0.1:4222';
const op = operator('bench');
const MESSAGE = 'x'.repeat(100);
const SAMPLES = 300;
const THROUGHPUT_MS = 3000;
const IN_FLIGHT = 32;
const FAST = { leaseMs: 1500, heartbeatMs: 250, pollMs: 200 };

const newSchema = () => `bench_cluster_${Math.random().toString(36).slice(2, 10)}`;
const dbOf = (schema: string) => `${PG_URL}?schema=${schema}`;

async function pgProblem(): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  c.on('error', () => {});
  try {
    await c.connect();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await c.end().catch(() => {});
  }
}

/** Two in-process nodes; a write on A, blocked reads on B (cross-node) and on A (same node). */
async function crossNodeLatency(): Promise<{ cross: number[]; same: number[]; acks: number[] }> {
  const schema = newSchema();
  const dirs = [
    mkdtempSync(join(tmpdir(), 'warren-bench-a-')),
    mkdtempSync(join(tmpdir(), 'warren-bench-b-')),
  ];
  const open = (i: number) =>
    Warren.open({
      db: dbOf(schema),
      dataDir: dirs[i]!,
      metrics: false,
      kernel: { nodeId: `bench-${i}`, resumeOnStart: false },
      cluster: FAST,
    });
  const a = await open(0);
  const b = await open(1);
  try {
    const room = (await a.call(op, 'streams_create', { name: 'lat', selfEcho: true })) as { fd: number };
    await new Promise((r) => setTimeout(r, 300)); // B has seen the room's fd
    // One delivery timed: the write on A until the blocked read on `reader` returns with it,
    // whether or not the writer has its ack yet (timing after both would measure the slower
    // of the two). The ack is timed too: the commit, which every delivery waits for.
    const once = async (reader: Warren): Promise<{ deliver: number; ack: number }> => {
      let deliveredAt = 0;
      const read = (
        reader.call(op, 'ipc_read', { fd: room.fd, wait: true, waitMs: 5000 }) as Promise<{
          messages: unknown[];
        }>
      ).then((got) => {
        deliveredAt = performance.now();
        return got;
      });
      await new Promise((r) => setImmediate(r));
      const t = performance.now();
      await a.call(op, 'ipc_write', { fd: room.fd, message: MESSAGE });
      const ack = performance.now() - t;
      const got = await read;
      if (got.messages.length === 0) throw new Error('a blocked read timed out');
      return { deliver: deliveredAt - t, ack };
    };
    // Same-node and cross-node samples alternate: both see the same load and the same warm-up.
    const same: number[] = [];
    const cross: number[] = [];
    const acks: number[] = [];
    for (let i = -5; i < SAMPLES; i++) {
      const s = await once(a);
      const c = await once(b);
      if (i < 0) continue;
      same.push(s.deliver);
      cross.push(c.deliver);
      acks.push(s.ack, c.ack);
    }
    return { cross, same, acks };
  } finally {
    await b.close();
    await a.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await dropSchema(schema);
  }
}

/** `n` node processes appending at once for THROUGHPUT_MS: acknowledged writes per second, all nodes. */
async function aggregateThroughput(n: number): Promise<number> {
  const schema = newSchema();
  const script = fileURLToPath(new URL('./lib/cluster-node.ts', import.meta.url));
  // Migrate once before the nodes race to.
  const first = await Warren.open({
    db: dbOf(schema),
    dataDir: mkdtempSync(join(tmpdir(), 'warren-bench-m-')),
    metrics: false,
    cluster: { mode: 'off' },
  });
  await first.close();
  const startAt = Date.now() + 4000;
  try {
    const runs = Array.from(
      { length: n },
      (_, i) =>
        new Promise<number>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [
              '--import',
              'tsx',
              script,
              dbOf(schema),
              `tp-${i}`,
              String(THROUGHPUT_MS),
              String(IN_FLIGHT),
              String(startAt + 2000),
            ],
            { stdio: ['ignore', 'pipe', 'pipe'] },
          );
          let out = '';
          child.stdout.on('data', (c) => {
            out += c;
          });
          child.stderr.on('data', (c) => {
            out += c;
          });
          const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
          child.on('exit', (code) => {
            clearTimeout(t);
            const line = out.split('\n').find((l) => l.startsWith('{"acked"'));
            if (code !== 0 || !line) reject(new Error(`node ${i} failed (${code}): ${out.slice(-500)}`));
            else resolve((JSON.parse(line) as { acked: number }).acked);
          });
        }),
    );
    const acked = (await Promise.all(runs)).reduce((x, y) => x + y, 0);
    return acked / (THROUGHPUT_MS / 1000);
  } finally {
    await dropSchema(schema);
  }
}

/** JetStream: file storage, ack'd publish, a durable pull consumer; latency and throughput. */
async function jetStream(): Promise<{ latency: number[]; rate: number } | string> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstream, jetstreamManager, AckPolicy } = await import('@nats-io/jetstream');
  let nc: Awaited<ReturnType<typeof connect>>;
  try {
    nc = await connect({ servers: NATS_URL, timeout: 2000 });
  } catch (error) {
    return `NATS unreachable at ${NATS_URL}: ${(error as Error).message}`;
  }
  const name = `WARREN_BENCH_${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
  const subject = `${name.toLowerCase()}.m`;
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.add({ name, subjects: [subject], storage: 'file' as never });
    await jsm.consumers.add(name, { durable_name: 'reader', ack_policy: AckPolicy.Explicit });
    const js = jetstream(nc);
    const consumer = await js.consumers.get(name, 'reader');
    const data = new TextEncoder().encode(MESSAGE);
    const latency: number[] = [];
    for (let i = -5; i < SAMPLES; i++) {
      const t = performance.now();
      await js.publish(subject, data);
      const m = await consumer.next({ expires: 5000 });
      if (!m) throw new Error('JetStream consumer got nothing');
      m.ack();
      if (i >= 0) latency.push(performance.now() - t);
    }
    const end = Date.now() + THROUGHPUT_MS;
    let acked = 0;
    const lane = async () => {
      while (Date.now() < end) {
        await js.publish(subject, data);
        acked++;
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    return { latency, rate: acked / (THROUGHPUT_MS / 1000) };
  } finally {
    await jsm.streams.delete(name).catch(() => {});
    await nc.close();
  }
}

/** Real servers: SIGKILL the node running two agents; until they run on the other. */
async function failover(trials: number): Promise<number[]> {
  const entry = fileURLToPath(new URL('../test/crash/serve-with.js', import.meta.url));
  const schema = newSchema();
  const children: ReturnType<typeof spawn>[] = [];
  const dirs: string[] = [];
  const start = async (nodeId: string, keyFrom?: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-bench-fo-'));
    dirs.push(dir);
    if (keyFrom) copyFileSync(join(keyFrom, 'operator.key'), join(dir, 'operator.key'));
    const opts = { cluster: FAST, kernel: { nodeId, reconcileIntervalMs: 500 } };
    const child = spawn(
      process.execPath,
      [entry, 'serve', '--port', '0', '--data-dir', dir, '--db', dbOf(schema), '--log-level', 'error'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, WARREN_FROM_SOURCE: '1', WARREN_TEST_OPTIONS: JSON.stringify(opts) },
      },
    );
    children.push(child);
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
    });
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 30_000);
      child.stdout!.on('data', () => {
        const m = /warren listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m[1]!);
        }
      });
    });
    const key = readFileSync(join(dir, 'operator.key'), 'utf8').trim();
    const api = async <T>(method: string, path: string, body?: unknown) => {
      const res = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return (await res.json()) as T;
    };
    return { child, dir, api };
  };
  const store = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
  const out: number[] = [];
  try {
    const survivor = await start('fo-base');
    await store.connect();
    for (let t = 0; t < trials; t++) {
      const victim = await start(`fo-${t}`, survivor.dir);
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const r = await victim.api<{ session: { id: string } }>('POST', '/v1/sessions', {
          runtime: 'script',
          script: { steps: [{ listen: {} }] },
        });
        ids.push(r.session.id);
      }
      await new Promise((r) => setTimeout(r, 500));
      const t0 = performance.now();
      victim.child.kill('SIGKILL');
      for (;;) {
        const r = await store.query<{ n: string }>(
          `select count(*) as n from sessions where id = any($1) and status in ('running','idle') and owner_node <> $2`,
          [ids, `fo-${t}`],
        );
        if (Number(r.rows[0]!.n) === ids.length) break;
        if (performance.now() - t0 > 30_000) throw new Error('failover took over 30 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      out.push(performance.now() - t0);
    }
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await store.end().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await dropSchema(schema);
  }
  return out;
}

async function clusterBench(): Promise<BenchRow[]> {
  const problem = await pgProblem();
  if (problem)
    return [
      { name: 'cluster', value: Number.NaN, unit: '', note: `SKIPPED: PostgreSQL unreachable: ${problem}` },
    ];
  const rows: BenchRow[] = [];
  const lat = await crossNodeLatency();
  const cross = summary(lat.cross);
  const same = summary(lat.same);
  const ack = summary(lat.acks);
  rows.push(
    { name: 'cluster: publisher ack (the commit) p50', value: round(ack.p50), unit: 'ms' },
    { name: 'cluster: publisher ack (the commit) p99', value: round(ack.p99), unit: 'ms' },
    { name: 'cluster: same-node publish→deliver p50', value: round(same.p50), unit: 'ms' },
    { name: 'cluster: same-node publish→deliver p99', value: round(same.p99), unit: 'ms' },
    {
      name: 'cluster: cross-node publish→deliver p50',
      value: round(cross.p50),
      unit: 'ms',
      baseline: round(same.p50),
      ratio: round(cross.p50 / same.p50),
    },
    {
      name: 'cluster: cross-node publish→deliver p99',
      value: round(cross.p99),
      unit: 'ms',
      baseline: round(same.p99),
      ratio: round(cross.p99 / same.p99),
      max: 10,
    },
  );
  const one = await aggregateThroughput(1);
  rows.push({ name: 'cluster: append throughput, 1 node', value: Math.round(one), unit: 'msg/s' });
  for (const n of [2, 3]) {
    const r = await aggregateThroughput(n);
    rows.push({
      name: `cluster: append throughput, ${n} nodes`,
      value: Math.round(r),
      unit: 'msg/s',
      baseline: Math.round(one),
      ratio: round(r / one),
    });
  }
  const js = await jetStream();
  if (typeof js === 'string') {
    rows.push({ name: 'cluster: vs JetStream', value: Number.NaN, unit: '', note: `SKIPPED: ${js}` });
  } else {
    const jl = summary(js.latency);
    rows.push(
      { name: 'JetStream publish→consume p50', value: round(jl.p50), unit: 'ms' },
      { name: 'JetStream publish→consume p99', value: round(jl.p99), unit: 'ms' },
      {
        name: 'cluster: cross-node p50 vs JetStream',
        value: round(cross.p50),
        unit: 'ms',
        baseline: round(jl.p50),
        ratio: round(cross.p50 / jl.p50),
        note: 'goal: within 2x',
      },
      {
        name: 'cluster: cross-node p99 vs JetStream',
        value: round(cross.p99),
        unit: 'ms',
        baseline: round(jl.p99),
        ratio: round(cross.p99 / jl.p99),
        note: 'goal: within 2x',
      },
      { name: 'JetStream ack’d publish throughput', value: Math.round(js.rate), unit: 'msg/s' },
      {
        name: 'cluster: 3-node throughput vs JetStream',
        value: Math.round(rows.find((r) => r.name.endsWith('3 nodes'))?.value ?? 0),
        unit: 'msg/s',
        baseline: Math.round(js.rate),
        ratio: round((rows.find((r) => r.name.endsWith('3 nodes'))?.value ?? 0) / js.rate),
        goal: 1,
      },
    );
  }
  const fo = summary(await failover(3));
  rows.push(
    {
      name: 'cluster: failover SIGKILL→running elsewhere p50',
      value: Math.round(fo.p50),
      unit: 'ms',
      note: `lease ${FAST.leaseMs} ms, heartbeat ${FAST.heartbeatMs} ms`,
    },
    { name: 'cluster: failover max', value: Math.round(fo.max), unit: 'ms', note: `${fo.n} trials` },
  );
  return rows;
}

export const clusterBenches = { cluster: clusterBench };
