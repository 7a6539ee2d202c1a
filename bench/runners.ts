/**
 * Remote runners: an agent on a `warren runner` process (another process on this host stands
 * for another host) against a local agent of the same server, in the same run.
 * - runnerSpawn: spawn → first output (a `command` agent printing its first line), p50/p99.
 * - runnerRoundTrip: a message in and a reply out — the operator sends, the agent writes the
 *   reply to its pipe over REST (through the runner's tunnel, or straight to the server),
 *   the operator's blocking read returns it — p50/p99.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerProcess, startServer } from '../test/helpers/server.ts';
import { echoCommand, type RunnerProcess, startRunner } from '../test/runners/helpers.ts';
import { round, summary } from './lib/stats.ts';
import type { BenchRow } from './store.ts';

const SPAWNS = 15;
const TRIPS = 60;

// biome-ignore lint/suspicious/noExplicitAny: answers are checked by their schemas
type Any = any;

async function firstOutputMs(
  server: ServerProcess,
  environmentId: string,
): Promise<{ ms: number; id: string }> {
  const t0 = performance.now();
  const r = await server.api<Any>('POST', '/v1/sessions', { environmentId, ...echoCommand() });
  if (r.status !== 200) throw new Error(`spawn on ${environmentId}: ${JSON.stringify(r.json)}`);
  const id = r.json.session.id as string;
  for (;;) {
    const s = await server.api<Any>('GET', `/v1/sessions/${id}`);
    if (s.json.session.lastMessage) return { ms: performance.now() - t0, id };
    if (performance.now() - t0 > 20_000) throw new Error(`no output from ${id} in 20 s`);
    await new Promise((res) => setTimeout(res, 2));
  }
}

async function roundTrips(server: ServerProcess, environmentId: string): Promise<number[]> {
  const r = await server.api<Any>('POST', '/v1/sessions', { environmentId, ...echoCommand() });
  const { session, pipeFd } = r.json;
  const ms: number[] = [];
  for (let i = -3; i < TRIPS; i++) {
    const t0 = performance.now();
    await server.api('POST', `/v1/sessions/${session.id}/send`, { text: `tunnel m${i}` });
    for (;;) {
      const read = await server.api<Any>('POST', `/v1/fds/${pipeFd}/read`, { wait: true, waitMs: 5000 });
      if (read.json.messages?.some((m: Any) => m.text === `m${i}`)) break;
      if (performance.now() - t0 > 20_000) throw new Error(`no reply m${i}`);
    }
    if (i >= 0) ms.push(performance.now() - t0); // the first three warm up
  }
  await server.api('POST', `/v1/sessions/${session.id}/kill`);
  return ms;
}

export async function runnerLatency(): Promise<BenchRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-runners-'));
  let server: ServerProcess | undefined;
  let runner: RunnerProcess | undefined;
  try {
    server = await startServer({
      dataDir,
      args: ['--max-children', '1000', '--max-sessions-per-zone', '1000'],
    });
    const tok = await server.api<Any>('POST', '/v1/runners', { name: 'bench' });
    runner = await startRunner({ url: server.url, token: tok.json.token, name: 'bench' });
    const spawn = async (env: string) => {
      const ms: number[] = [];
      for (let i = 0; i < SPAWNS; i++) {
        const r = await firstOutputMs(server!, env);
        ms.push(r.ms);
        await server!.api('POST', `/v1/sessions/${r.id}/kill`);
      }
      return summary(ms);
    };
    const localSpawn = await spawn('local');
    const remoteSpawn = await spawn('runner:bench');
    const localTrip = summary(await roundTrips(server, 'local'));
    const remoteTrip = summary(await roundTrips(server, 'runner:bench'));
    const row = (name: string, v: number, base: number, note: string): BenchRow => ({
      name,
      value: round(v),
      unit: 'ms',
      baseline: round(base),
      ratio: round(v / base),
      note,
    });
    return [
      row(
        'runner spawn→first output p50',
        remoteSpawn.p50,
        localSpawn.p50,
        `local agent as baseline, n=${SPAWNS}`,
      ),
      row('runner spawn→first output p99', remoteSpawn.p99, localSpawn.p99, 'local agent as baseline'),
      row('runner message round trip p50', remoteTrip.p50, localTrip.p50, `send → reply on pipe, n=${TRIPS}`),
      row('runner message round trip p99', remoteTrip.p99, localTrip.p99, 'local agent as baseline'),
    ];
  } finally {
    await runner?.crash();
    await server?.crash();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const runnerBenches = { runnerLatency };
