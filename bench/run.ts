/**
 * `npm run bench`: the store, kernel, MCP and CLI-start benchmarks, one table. Every bench cleans up after
 * itself (temp dirs, PostgreSQL schemas, warrens closed), so the process exits on its own.
 * A bench that throws becomes a FAILED row and the exit code is 1.
 */
import { arch, cpus, loadavg, platform } from 'node:os';
import { cliBenches } from './cli.ts';
import { kernelBenches } from './kernel.ts';
import { mcpBenches } from './mcp.ts';
import { type BenchRow, formatRows, storeBenches, verdict } from './store.ts';

const benches: Array<[string, () => Promise<BenchRow[]>]> = [
  ...Object.entries(storeBenches),
  ...Object.entries(kernelBenches),
  ...Object.entries(mcpBenches),
  ...Object.entries(cliBenches),
];

const machine = () => {
  const cpu = cpus();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return `node ${process.version}, ${platform()}/${arch()}, ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? 'unknown'}), load average at start ${load}`;
};

const header = machine();
const t0 = performance.now();
const rows: BenchRow[] = [];
let failed = false;
for (const [name, bench] of benches) {
  process.stderr.write(`bench: ${name} …\n`);
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
console.log(header);
const missed = rows.filter((r) => verdict(r) === 'MISS').map((r) => r.name);
console.log(
  `${rows.length} rows in ${seconds.toFixed(0)} s; ${missed.length === 0 ? 'every goal met' : `goal missed: ${missed.join('; ')}`}`,
);
if (failed) process.exitCode = 1;
