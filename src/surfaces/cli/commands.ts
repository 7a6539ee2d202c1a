import type { Syscall } from '../../syscalls/types.ts';
import { GLOBAL_NAMES, type GlobalName } from './globals.ts';
import { type FieldInfo, inputFields } from './schema-info.ts';
import type { LocalCommand } from './types.ts';

/** The command set: one command per syscall with a `cli` binding, plus the local commands. */

export interface FlagSpec {
  /** The kebab-case flag, without dashes: `self-echo`. */
  flag: string;
  /** Extra names from the binding's `flags` (e.g. `perm` for `permission`). */
  aliases: string[];
  field: FieldInfo;
}

export interface SyscallCommand {
  kind: 'syscall';
  words: string[];
  group: string;
  summary: string;
  syscall: Syscall;
  positional: FieldInfo[];
  flags: FlagSpec[];
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
export const GROUPS = ['sessions', 'streams', 'fds', 'events', 'server'] as const;

export const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export function buildCommands(
  syscalls: readonly Syscall[],
  locals: readonly LocalCommand[] = [],
): CommandEntry[] {
  const entries: CommandEntry[] = [];
  for (const syscall of syscalls) if (syscall.cli) entries.push(syscallCommand(syscall));
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

function syscallCommand(syscall: Syscall): SyscallCommand {
  const cli = syscall.cli!;
  const fields = inputFields(syscall.input);
  const byName = new Map(fields.map((f) => [f.name, f]));
  const positional = (cli.positional ?? []).map((name) => {
    const field = byName.get(name);
    if (!field) throw new Error(`${syscall.name}: positional "${name}" is not an input field`);
    return field;
  });
  const flags: FlagSpec[] = fields
    .filter((f) => !cli.positional?.includes(f.name))
    .map((field) => ({ flag: kebab(field.name), aliases: [], field }));
  for (const [alias, fieldName] of Object.entries(cli.flags ?? {})) {
    const spec = flags.find((f) => f.field.name === fieldName);
    if (!spec) throw new Error(`${syscall.name}: flag alias --${alias} names no flag field "${fieldName}"`);
    if (alias !== spec.flag) spec.aliases.push(alias);
  }
  for (const name of flags.flatMap((f) => [f.flag, ...f.aliases])) {
    if (GLOBAL_NAMES.includes(name as GlobalName)) {
      throw new Error(`${syscall.name}: flag --${name} collides with a global option`);
    }
  }
  return {
    kind: 'syscall',
    words: cli.command,
    group: groupOf(syscall),
    summary: syscall.summary,
    syscall,
    positional,
    flags,
  };
}

function groupOf(syscall: Syscall): string {
  const [first] = syscall.cli!.command;
  if (first === 'fds' || first === 'streams') return first;
  if (syscall.group === 'events') return 'events';
  return 'sessions';
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
