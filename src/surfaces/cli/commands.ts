import type { SyscallSpec } from './spec.ts';
import type { LocalCommand } from './types.ts';

/** The command set: one command per syscall with a `cli` binding, plus the local commands. */

export { kebab } from './manifest.ts';
export type { FlagSpec, SyscallSpec } from './spec.ts';

export interface SyscallCommand extends SyscallSpec {
  kind: 'syscall';
}

export interface LocalEntry {
  kind: 'local';
  words: string[];
  group: string;
  summary: string;
  local: LocalCommand;
}

export type CommandEntry = SyscallCommand | LocalEntry;

/** Help groups, in the order help lists them. */
export const GROUPS = ['sessions', 'streams', 'fds', 'events', 'zones', 'server'] as const;

export function buildCommands(
  specs: readonly SyscallSpec[],
  locals: readonly LocalCommand[] = [],
): CommandEntry[] {
  const entries: CommandEntry[] = specs.map((spec) => ({ kind: 'syscall', ...spec }));
  for (const local of locals) {
    entries.push({
      kind: 'local',
      words: local.command,
      group: local.group ?? 'server',
      summary: local.summary,
      local,
    });
  }
  const seen = new Set<string>();
  for (const e of entries) {
    const key = e.words.join(' ');
    if (seen.has(key)) throw new Error(`CLI command "${key}" is defined twice`);
    seen.add(key);
  }
  return entries;
}

/** The longest command whose words start `words`. */
export function matchCommand(
  commands: readonly CommandEntry[],
  words: readonly string[],
): { entry: CommandEntry; consumed: number } | undefined {
  let best: CommandEntry | undefined;
  for (const c of commands) {
    if (c.words.length > words.length) continue;
    if (!c.words.every((w, i) => words[i] === w)) continue;
    if (!best || c.words.length > best.words.length) best = c;
  }
  return best ? { entry: best, consumed: best.words.length } : undefined;
}

/** Commands under a prefix (`streams` -> every `streams …` command). */
export const commandsUnder = (commands: readonly CommandEntry[], prefix: readonly string[]): CommandEntry[] =>
  commands.filter((c) => c.words.length > prefix.length && prefix.every((w, i) => c.words[i] === w));
