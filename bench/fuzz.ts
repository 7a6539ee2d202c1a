/**
 * fuzz: every case of test/http/fuzz.test.ts (~15,000 generated from the syscall table:
 * every REST route and MCP tool with wrong types, huge strings, deep nesting, bad ids), where
 * the suite runs a seeded sample of 400. Checked as the test checks them (no 5xx, no hang, the
 * server still serves, the log gap-free); the time is what this reports, never the test.
 * Row: milliseconds per case over all of them; baseline, same run: the suite's sample of 400
 * on a fresh server; the ratio shows whether the full set costs more per case than the sample.
 * SQLite, in process, six cases at a time.
 *
 * `npm run bench -- fuzz`; FUZZ_SEED picks another sample for the baseline.
 */
import { request, startHttp } from '../test/helpers/http.ts';
import { assertGapFree, type FuzzResult, fuzz } from '../test/http/fuzz-cases.ts';
import { round } from './lib/stats.ts';
import { benchTarget } from './lib/target.ts';
import type { BenchRow } from './store.ts';

const SAMPLE = 400;
const SEED = Number(process.env.FUZZ_SEED ?? 28);

/** One fuzz run on a fresh server: its cases' results and wall time, the server checked after. */
async function run(n: number): Promise<FuzzResult & { ms: number }> {
  await using t = benchTarget();
  const h = await startHttp(t, {
    kernel: { limits: { maxDepth: 10, maxChildren: 200, maxSessionsPerZone: 400 } },
  });
  const t0 = performance.now();
  const r = await fuzz(h, n, SEED);
  const ms = performance.now() - t0;
  const health = await request(h.url, 'GET', '/healthz', undefined, { auth: null });
  if (health.status !== 200) throw new Error(`healthz answered ${health.status} after the fuzz`);
  await assertGapFree(h);
  if (r.failures.length > 0)
    throw new Error(`${r.failures.length} failures, first: ${r.failures.slice(0, 3).join(' | ')}`);
  return { ...r, ms };
}

async function fuzzAll(): Promise<BenchRow[]> {
  const sample = await run(SAMPLE);
  const all = await run(Number.POSITIVE_INFINITY);
  const perCase = all.ms / all.ran;
  const base = sample.ms / sample.ran;
  return [
    {
      name: 'fuzz: every case, per case',
      value: round(perCase, 2),
      unit: 'ms',
      baseline: round(base, 2),
      ratio: round(perCase / base, 2),
      note: `${all.ran} cases in ${round(all.ms / 1000, 1)} s, 0 failures; baseline: the suite's sample (${sample.ran}, seed ${SEED}) in ${round(sample.ms / 1000, 1)} s`,
    },
  ];
}

export const fuzzBenches = { fuzz: fuzzAll };
