/**
 * `npm run bench`: the store, kernel, MCP, CLI-start, scale, load and turn benchmarks, one table. Every bench
 * cleans up after itself (temp dirs, PostgreSQL schemas, warrens closed, servers killed), so
 * the process exits on its own. A bench that throws becomes a FAILED row and the exit code is 1.
 *
 * A subset: `npm run bench -- scale load` runs the groups named (every key of `groups` below)
 * or single benches (e.g. `spawnOverhead`, `scaleLog`) named; `quick` is store, kernel and
 * mcp (under a minute; scale and load take several). No argument runs everything.
 */
import { arch, cpus, loadavg, platform } from 'node:os';
import { cliBenches } from './cli.ts';
import { clusterBenches } from './cluster.ts';
import { completionBenches } from './completion.ts';
import { containmentBenches } from './containment.ts';
import { coordinatorBenches } from './coordinator.ts';
import { fuzzBenches } from './fuzz.ts';
import { groupBenches } from './groups.ts';
import { kernelBenches } from './kernel.ts';
import { knowledgeBenches } from './knowledge.ts';
import { loadBenches } from './load.ts';
import { mcpBenches } from './mcp.ts';
import { mcpSessionBenches } from './mcp-sessions.ts';
import { observabilityBenches } from './observability.ts';
import { pluginBenches } from './plugins.ts';
import { retireBenches } from './retire.ts';
import { roomBenches } from './rooms.ts';
import { runnerBenches } from './runners.ts';
import { scaleBenches } from './scale.ts';
import { scheduleBenches } from './schedules.ts';
import { stallBenches } from './stall.ts';
import { type BenchRow, formatRows, storeBenches, verdict } from './store.ts';
import { taskBenches } from './tasks.ts';
import { teamBenches } from './team.ts';
import { toolBenches } from './tools.ts';
import { turnBenches } from './turns.ts';
import { uiBenches } from './ui.ts';
import { watchBenches } from './watch.ts';

type Bench = () => Promise<BenchRow[]>;

const groups: Record<string, Record<string, Bench>> = {
  store: storeBenches,
  kernel: kernelBenches,
  containment: containmentBenches,
  mcp: mcpBenches,
  mcpSessions: mcpSessionBenches,
  plugins: pluginBenches,
  observability: observabilityBenches,
  cli: cliBenches,
  scale: scaleBenches,
  load: loadBenches,
  turns: turnBenches,
  tasks: taskBenches,
  ui: uiBenches,
  knowledge: knowledgeBenches,
  runners: runnerBenches,
  cluster: clusterBenches,
  schedules: scheduleBenches,
  groups: groupBenches,
  coordinator: coordinatorBenches,
  watch: watchBenches,
  rooms: roomBenches,
  team: teamBenches,
  tools: toolBenches,
  stall: stallBenches,
  fuzz: fuzzBenches,
  retire: retireBenches,
  completion: completionBenches,
};
const aliases: Record<string, string[]> = {
  all: Object.keys(groups),
  quick: ['store', 'kernel', 'mcp', 'cli', 'plugins', 'observability'],
};

function select(args: string[]): Array<[string, Bench]> {
  const wanted = (args.length === 0 ? ['all'] : args).flatMap((a) => aliases[a] ?? [a]);
  const all = Object.values(groups).flatMap((g) => Object.entries(g));
  return wanted.flatMap((name) => {
    const group = groups[name];
    if (group) return Object.entries(group);
    const one = all.find(([n]) => n === name);
    if (one) return [one];
    throw new Error(`no bench or group named ${name}; groups: ${Object.keys(groups).join(', ')}`);
  });
}

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
