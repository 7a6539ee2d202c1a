import { readFileSync } from 'node:fs';
import type { Syscall } from '../../contract/syscall.ts';
import { GLOBAL_NAMES, type GlobalName } from './globals.ts';
import { inputFields } from './schema-info.ts';
import type { FlagSpec, SyscallSpec } from './spec.ts';

/**
 * The CLI's view of the syscall table as plain data. Reading it from the zod schemas means
 * loading zod and every syscall module (a quarter of a second: more than node itself), so the
 * build writes it to `manifest.json` beside this module (write-manifest.ts) and client commands
 * read that. Run from the sources there is no such file, and it is derived from the table.
 */

const MANIFEST = new URL('./manifest.json', import.meta.url);

export async function loadSpecs(): Promise<SyscallSpec[]> {
  let text: string;
  try {
    text = readFileSync(MANIFEST, 'utf8');
  } catch {
    const { allSyscalls } = await import('../../syscalls/table.ts');
    return syscallSpecs(allSyscalls);
  }
  return JSON.parse(text) as SyscallSpec[];
}

export const syscallSpecs = (syscalls: readonly Syscall[]): SyscallSpec[] =>
  syscalls.filter((s) => s.cli).map(specOf);

/** A field's flag: camelCase and snake_case (the seeds' wire names) both become kebab-case. */
export const kebab = (name: string): string =>
  name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`).replaceAll('_', '-');

function specOf(syscall: Syscall): SyscallSpec {
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
  // A snake_case field keeps its own name as an alias (scripts written against the wire
  // names), unless another flag or a global option has it.
  const taken = new Set<string>([...flags.map((f) => f.flag), ...GLOBAL_NAMES]);
  for (const f of flags) {
    if (f.field.name.includes('_') && !taken.has(f.field.name)) {
      f.aliases.push(f.field.name);
      taken.add(f.field.name);
    }
  }
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
    name: syscall.name,
    words: cli.command,
    group: groupOf(syscall),
    summary: syscall.summary,
    ...(syscall.description ? { description: syscall.description } : {}),
    examples: cli.examples ?? [],
    ...(syscall.http ? { http: syscall.http } : {}),
    positional,
    flags,
    ...(cli.exit ? { exit: cli.exit } : {}),
  };
}

function groupOf(syscall: Syscall): string {
  const [first] = syscall.cli!.command;
  if (first === 'fds' || first === 'streams' || first === 'zones') return first;
  if (syscall.group === 'events') return 'events';
  if (
    ['plugins', 'tasks', 'inbox', 'personas', 'knowledge', 'schedules', 'groups', 'coordinator'].includes(
      syscall.group,
    )
  )
    return syscall.group;
  return 'sessions';
}
