import type { SyscallTable } from '../../syscalls/dispatch.ts';
import { buildCommands, kebab } from '../cli/commands.ts';
import { signature } from '../cli/help.ts';
import { syscallSpecs } from '../cli/manifest.ts';
import { inputFields } from '../cli/schema-info.ts';

/** Titles of the groups this build ships, in reference order; a group not listed follows under its name. */
const GROUP_TITLES: Record<string, string> = {
  ipc: 'ipc — what agents use (and operators, on their own fds)',
  sessions: 'sessions — process control',
  streams: 'streams — the operator control plane',
  events: 'events — reading the action log',
  operator: 'operator',
  plugins: 'plugins — which policy modules run',
  tasks: 'tasks — the orchestration plugin',
  inbox: 'inbox — escalations to an operator',
  personas: 'personas — stored agent configurations',
  knowledge: 'knowledge — findings, search and task workpads',
  schedules: 'schedules — the scheduling plugin',
  groups: 'groups — agent groups, their sockets, routes and inbound messages (seed 002)',
  coordinator: 'coordinator — zoned agent sessions, services, invocations, delegations, the outbox',
  turns: 'turns — the coordinator bridge (durable turns, questions, reports, artifacts, watch)',
};

/** docs/reference.md, rendered from the syscall table: the one source of every surface. */
export function renderReference(table: SyscallTable): string {
  const commands = buildCommands(syscallSpecs([...table.values()]), []);
  const out: string[] = [
    '# Syscall reference',
    '',
    '<!-- Generated from the syscall table by `npm run docs`. Do not edit by hand: a test checks it is current. -->',
    '',
    "Every operation is defined once, in its plugin (`src/plugins/<plugin>/`; the kernel's own in `src/plugins/core/`);",
    'REST routes, CLI commands and MCP tools are generated from',
    'these definitions. Every syscall is also reachable as `POST /v1/syscalls/<name>` with its input as the JSON body.',
    '',
  ];
  const groups = new Set([...Object.keys(GROUP_TITLES), ...[...table.values()].map((s) => s.group)]);
  for (const group of groups) {
    const members = [...table.values()].filter((s) => s.group === group);
    if (members.length === 0) continue;
    out.push(`## ${GROUP_TITLES[group] ?? group}`, '');
    for (const s of members) {
      out.push(`### \`${s.name}\``, '', s.summary + (s.summary.endsWith('.') ? '' : '.'), '');
      if (s.description) out.push(s.description, '');
      if (s.plugin && s.plugin !== 'core') out.push(`- Plugin: ${s.plugin} (absent when it is disabled)`);
      out.push(`- Callers: ${s.callers.join(', ')}`);
      if (s.http) out.push(`- REST: \`${s.http.method} ${s.http.path}\``);
      const cmd = commands.find((c) => c.kind === 'syscall' && c.name === s.name);
      if (cmd) out.push(`- CLI: \`warren ${signature(cmd)}\``);
      out.push('');
      const fields = inputFields(s.input);
      if (fields.length > 0) {
        out.push('| input | type | required | default | description |', '|---|---|---|---|---|');
        for (const f of fields) {
          const type = f.kind === 'enum' ? (f.choices ?? []).join(' \\| ') : f.kind;
          const dflt = f.default === undefined ? '' : `\`${JSON.stringify(f.default)}\``;
          out.push(
            `| \`${f.name}\` (\`--${kebab(f.name)}\`) | ${type} | ${f.required ? 'yes' : ''} | ${dflt} | ${(f.description ?? '').replaceAll('|', '\\|')} |`,
          );
        }
        out.push('');
      }
      if (s.cli?.examples?.length) out.push('```sh', ...s.cli.examples, '```', '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
