/**
 * `npm run bench`: the store, kernel, MCP, CLI-start, scale, load and turn benchmarks, one table. Every bench
 * cleans up after itself (temp dirs, PostgreSQL schemas, warrens closed, servers killed), so
 * the process exits on its own. A bench that throws becomes a FAILED row and the exit code is 1.
 *
 * A subset: `npm run bench -- scale load` runs the groups named (the keys of `groups` in
 * lib/registry.ts) or single benches (e.g. `spawnOverhead`, `scaleLog`) named; `quick` is the
 * fast groups (scale and load take several minutes each). No argument runs everything.
 * Two builds side by side, in one run: bench/compare.ts.
 */
import { arch, cpus, loadavg, platform } from 'node:os';
import { select } from './lib/registry.ts';
import { type BenchRow, formatRows, verdict } from './store.ts';

const machine = () => {
  const cpu = cpus();
  return `node ${process.version}, ${platform()}/${arch()}, ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? 'unknown'}), load average`;
};

const benches = select(process.argv.slice(2));
const header = `${machine()} at start ${loadText()}`;
const t0 = performance.now();
const rows: BenchRow[] = [];
let failed = false;
for (const [name, bench] of benches) {
  process.stderr.write(`bench: ${name} … (load ${loadText()})\n`);
  try {
    rows.push(...(await bench()));
  } catch (error) {
    failed = true;
    rows.push({
      name,
      value: Number.NaN,
      unit: '',
      note: `FAILED: ${(error as Error).message ?? String(error)}`,
    });
  }
}
const seconds = (performance.now() - t0) / 1000;

console.log(formatRows(rows));
console.log('');
console.log(`${header}, at end ${loadText()}`);
const missed = rows.filter((r) => verdict(r) === 'MISS').map((r) => r.name);
console.log(
  `${rows.length} rows in ${seconds.toFixed(0)} s; ${missed.length === 0 ? 'every goal met' : `goal missed: ${missed.join('; ')}`}`,
);
if (failed) process.exitCode = 1;

function loadText(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}
