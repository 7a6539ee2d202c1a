/**
 * completion: what an MCP completion answer runs (session ids by prefix, `lifecycle:` stream
 * names by prefix; the kernel's `listSessions` and `streamNames`, as the core plugin's
 * completions call them), per answer, among 10,000 live sessions; baseline, same run and
 * prefixes: among 100. The promise is that an answer costs the matches, not the table. Among
 * 10,000 an answer holds up to 100 matches (the cap), among 100 a few: so the ratio is the
 * matches' (measured 5×, goal at most 10×), where a scan would make it ~100×. The suite proves the
 * same by the queries' plans (test/mcp/completion.test.ts); this is its time. SQLite, in process.
 *
 * `npm run bench -- completion`.
 */
import { Warren } from '../src/syscalls/warren.ts';
import { fillSessions } from '../test/store/fill-log.ts';
import { op } from './lib/sessions.ts';
import { round, timeEach } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const PREFIXES = ['ses_5', 'ses_77', 'ses_1234', ''];
const ANSWERS = 200;

/** p50 ms of one completion answer (both kinds, over the prefixes) among `sessions`. */
async function perAnswer(sessions: number): Promise<number> {
  using tmp = tempDir();
  const w = await Warren.open({ dataDir: tmp.dir });
  try {
    await fillSessions(w.store, { sessions, liveEvery: 1 });
    await w.store.analyze();
    const s = await timeEach(ANSWERS, async (i) => {
      const prefix = PREFIXES[Math.abs(i) % PREFIXES.length]!;
      await w.kernel.listSessions(op, { prefix, limit: 100 });
      await w.kernel.streamNames(op, { prefix: `lifecycle:${prefix}`, limit: 100 });
    });
    return s.p50 / 2;
  } finally {
    await w.close();
  }
}

async function completion(): Promise<BenchRow[]> {
  const base = await perAnswer(100);
  const value = await perAnswer(10_000);
  return [
    {
      name: 'completion: an answer among 10,000 sessions, p50',
      value: round(value, 3),
      unit: 'ms',
      baseline: round(base, 3),
      ratio: round(value / base, 2),
      max: round(base * 10, 3),
      note: 'baseline: among 100 sessions (fewer matches an answer); max = 10 × baseline (a scan: ~100×)',
    },
  ];
}

export const completionBenches = { completion };
