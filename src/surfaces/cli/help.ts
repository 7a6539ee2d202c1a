import { type CommandEntry, GROUPS, type SyscallCommand } from './commands.ts';
import { GLOBAL_OPTIONS } from './globals.ts';
import type { FieldInfo } from './schema-info.ts';

/** Help text, generated from the same command set the parser uses. */

const indentList = (rows: [string, string][]): string[] => {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`.trimEnd());
};

const title = (group: string) => group[0]!.toUpperCase() + group.slice(1);

/** `streams attach <session> <stream>` */
export const signature = (c: CommandEntry): string =>
  [
    ...c.words,
    ...(c.kind === 'syscall' ? c.positional.map((f) => (f.required ? `<${f.name}>` : `[${f.name}]`)) : []),
  ].join(' ');

const globalLines = (): string[] =>
  indentList(
    Object.entries(GLOBAL_OPTIONS).map(([name, o]): [string, string] => [
      `${'short' in o ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` <${name}>` : ''}`,
      o.help,
    ]),
  );

export function mainHelp(commands: readonly CommandEntry[]): string {
  const lines = [
    'warren — an agent kernel: sessions, streams, fds and a durable action log',
    '',
    'Usage: warren <command> [arguments] [options]',
  ];
  const groups = [
    ...GROUPS,
    ...new Set(commands.map((c) => c.group).filter((g) => !GROUPS.includes(g as never))),
  ];
  for (const group of groups) {
    const members = commands.filter((c) => c.group === group);
    if (members.length === 0) continue;
    lines.push('', `${title(group)}:`, ...indentList(members.map((c) => [signature(c), c.summary])));
  }
  lines.push(
    '',
    'Global options:',
    ...globalLines(),
    '',
    "Run 'warren <command> --help' for its options and examples.",
  );
  return `${lines.join('\n')}\n`;
}

export function groupHelp(prefix: readonly string[], members: readonly CommandEntry[]): string {
  const lines = [
    `Usage: warren ${prefix.join(' ')} <command> [arguments] [options]`,
    '',
    'Commands:',
    ...indentList(members.map((c) => [signature(c), c.summary])),
  ];
  return `${lines.join('\n')}\n`;
}

export function commandHelp(c: CommandEntry, under: readonly CommandEntry[] = []): string {
  if (c.kind === 'local') return `${c.summary}\n\n${c.local.usage.trimEnd()}\n`;
  const lines = [`Usage: warren ${signature(c)}${c.flags.length ? ' [options]' : ''}`, '', c.summary];
  if (c.description) lines.push('', c.description);
  if (c.positional.length) {
    lines.push(
      '',
      'Arguments:',
      ...indentList(c.positional.map((f) => [`<${f.name}>`, fieldNotes(f, { showRequired: false })])),
    );
  }
  if (c.flags.length) lines.push('', 'Options:', ...indentList(optionRows(c)));
  // A command that is also a group (`inbox`, `inbox answer`): say what lives under it.
  if (under.length) lines.push('', 'Commands:', ...indentList(under.map((u) => [signature(u), u.summary])));
  lines.push('', 'Global options:', ...globalLines());
  const examples = c.examples;
  if (examples.length) lines.push('', 'Examples:', ...examples.map((e) => `  ${e}`));
  return `${lines.join('\n')}\n`;
}

const optionRows = (c: SyscallCommand): [string, string][] =>
  c.flags.map((spec) => {
    const names = [spec.flag, ...spec.aliases].map((n) => `--${n}`).join(', ');
    const value = valueHint(spec.field);
    return [value ? `${names} ${value}` : names, fieldNotes(spec.field, { showRequired: true })];
  });

function valueHint(f: FieldInfo): string {
  switch (f.kind) {
    case 'boolean':
      return '';
    case 'number':
      return '<n>';
    case 'enum':
      return `<${f.choices?.join('|')}>`;
    case 'json':
      return f.strictJson ? '<json|@file>' : '<text|json|@file>';
    case 'string':
      return '<text>';
  }
}

function fieldNotes(f: FieldInfo, opts: { showRequired: boolean }): string {
  const notes = [f.description ?? ''];
  if (f.default !== undefined)
    notes.push(`(default: ${typeof f.default === 'string' ? f.default : JSON.stringify(f.default)})`);
  if (opts.showRequired && f.required) notes.push('(required)');
  if (!opts.showRequired && !f.required) notes.push('(optional)');
  return notes.filter(Boolean).join(' ');
}
