// `npm run mutate [-- area … --force]`: StrykerJS over each area of stryker.config.mjs in turn (all of
// them by default), then one summary: per area the mutants by status, the score, the time,
// and every survivor with its place and replacement. Reports: reports/mutation/<area>.{json,html}.
// PostgreSQL halves of the test files are skipped (the mutated code does not differ by backend).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AREAS } from '../stryker.config.mjs';

const args = process.argv.slice(2);
// Options (`--force`: retest everything, not only what changed) go to every stryker run.
const flags = args.filter((a) => a.startsWith('--'));
const named = args.filter((a) => !a.startsWith('--'));
const areas = named.length > 0 ? named : Object.keys(AREAS);
for (const a of areas) if (!AREAS[a]) throw new Error(`unknown area ${a}: ${Object.keys(AREAS).join(', ')}`);

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const rows = [];
const survivors = [];
let failed = false;
for (const area of areas) {
  const t0 = Date.now();
  const run = spawnSync(
    process.execPath,
    ['node_modules/@stryker-mutator/core/bin/stryker.js', 'run', ...flags],
    {
      stdio: 'inherit',
      env: { ...process.env, MUTATE_AREA: area, WARREN_TEST_PG_URL: 'postgres://127.0.0.1:1/none' },
    },
  );
  const seconds = Math.round((Date.now() - t0) / 1000);
  if (run.status !== 0) {
    failed = true;
    rows.push({ area, error: `stryker exited with ${run.status}`, seconds });
    continue;
  }
  const report = JSON.parse(readFileSync(`reports/mutation/${area}.json`, 'utf8'));
  const count = {};
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const m of mutants) {
      count[m.status] = (count[m.status] ?? 0) + 1;
      if (UNDETECTED.has(m.status))
        survivors.push(
          `${area} ${file}:${m.location.start.line}:${m.location.start.column} ${m.status} ${m.mutatorName}: ${JSON.stringify(m.replacement)}`,
        );
    }
  }
  const sum = (set) => Object.entries(count).reduce((n, [s, c]) => n + (set.has(s) ? c : 0), 0);
  const detected = sum(DETECTED);
  const valid = detected + sum(UNDETECTED);
  rows.push({ area, ...count, score: valid ? `${((100 * detected) / valid).toFixed(1)}%` : '-', seconds });
}
console.log('\nmutation summary');
console.table(rows);
const all = rows.reduce(
  (t, r) => ({
    detected: t.detected + (r.Killed ?? 0) + (r.Timeout ?? 0),
    valid: t.valid + (r.Killed ?? 0) + (r.Timeout ?? 0) + (r.Survived ?? 0) + (r.NoCoverage ?? 0),
    seconds: t.seconds + r.seconds,
  }),
  { detected: 0, valid: 0, seconds: 0 },
);
console.log(
  `total: ${all.detected}/${all.valid} detected, score ${all.valid ? ((100 * all.detected) / all.valid).toFixed(1) : '-'}%, ${Math.round(all.seconds / 60)} min`,
);
if (survivors.length > 0) console.log(`\nsurvivors:\n${survivors.join('\n')}`);
process.exitCode = failed ? 1 : 0;
