/**
 * Every bench by group, and the names `npm run bench` and `bench/compare.ts` take: a group
 * (`store`), an alias (`quick`, `all`) or a single bench (`sqliteAppend`).
 */
import { cliBenches } from '../cli.ts';
import { clusterBenches } from '../cluster.ts';
import { completionBenches } from '../completion.ts';
import { containmentBenches } from '../containment.ts';
import { coordinatorBenches } from '../coordinator.ts';
import { faultBenches } from '../faults.ts';
import { fuzzBenches } from '../fuzz.ts';
import { gatewayBenches } from '../gateway.ts';
import { groupBenches } from '../groups.ts';
import { kernelBenches } from '../kernel.ts';
import { knowledgeBenches } from '../knowledge.ts';
import { loadBenches } from '../load.ts';
import { mcpBenches } from '../mcp.ts';
import { mcpSessionBenches } from '../mcp-sessions.ts';
import { observabilityBenches } from '../observability.ts';
import { pluginBenches } from '../plugins.ts';
import { retireBenches } from '../retire.ts';
import { roomBenches } from '../rooms.ts';
import { runnerBenches } from '../runners.ts';
import { scaleBenches } from '../scale.ts';
import { scheduleBenches } from '../schedules.ts';
import { stallBenches } from '../stall.ts';
import { type BenchRow, storeBenches } from '../store.ts';
import { taskBenches } from '../tasks.ts';
import { teamBenches } from '../team.ts';
import { toolBenches } from '../tools.ts';
import { turnBenches } from '../turns.ts';
import { uiBenches } from '../ui.ts';
import { watchBenches } from '../watch.ts';

export type Bench = () => Promise<BenchRow[]>;

export const groups: Record<string, Record<string, Bench>> = {
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
  faults: faultBenches,
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
  gateway: gatewayBenches,
};
export const aliases: Record<string, string[]> = {
  all: Object.keys(groups),
  quick: ['store', 'kernel', 'mcp', 'cli', 'plugins', 'observability'],
};

/** The benches `args` name (groups, aliases or single benches), in order; none: every bench. */
export function select(args: string[]): Array<[string, Bench]> {
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
