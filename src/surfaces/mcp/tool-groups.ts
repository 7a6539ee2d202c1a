import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Syscall } from '../../contract/syscall.ts';
import type { Gate } from '../../syscalls/gate.ts';
import { invalid } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';

/**
 * An operator's MCP list is its job's default set; the rest is there on request, per
 * connection: `tools_groups` lists the tool groups (a syscall's `group`), `tools_enable`
 * turns groups on and sends `notifications/tools/list_changed`. A connection may also start
 * with groups on: `?tools=<g1,g2|all>` on the `/mcp` URL (`warren mcp --tools …`). These two
 * tools are the MCP surface's own (they change a connection, not the warren), so they are not
 * syscalls; sessions have neither: their set was fixed at spawn.
 */
export const TOOLS_GROUPS = 'tools_groups';
export const TOOLS_ENABLE = 'tools_enable';

export const enableInput = z.object({
  groups: z
    .array(z.string().min(1).max(64))
    .min(1)
    .max(64)
    .describe("Groups to add to this connection's list (from tools_groups), or ['all']"),
});

/** The two tools as MCP lists them. */
export const connectionTools = (): Tool[] => [
  {
    name: TOOLS_GROUPS,
    title: 'List the tool groups',
    description:
      "The tool groups you may call: each group's tools, its size in tokens, and whether it is in this connection's list. Turn one on with tools_enable.",
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: TOOLS_ENABLE,
    title: 'Turn tool groups on for this connection',
    description:
      'Add tool groups to this connection’s tool list (the client is told the list changed). Tools outside the list are callable by name all the same.',
    inputSchema: z.toJSONSchema(enableInput, { io: 'input' }) as Tool['inputSchema'],
  },
];

/** What `tools_groups` answers: every group the caller may call something of. */
export function groupsOf(
  gate: Gate,
  principal: Principal,
  enabled: ReadonlySet<string> | 'all',
  tokensOf: (s: Syscall) => number,
) {
  const listed = new Set(gate.listed(principal, enabled).map((s) => s.name));
  const out: Array<{ group: string; tools: string[]; tokens: number; listed: 'all' | 'some' | 'none' }> = [];
  for (const [group, members] of gate.groups()) {
    const mine = members.filter((s) => gate.allows(principal, s));
    if (mine.length === 0) continue;
    const on = mine.filter((s) => listed.has(s.name)).length;
    out.push({
      group,
      tools: mine.map((s) => s.name),
      tokens: mine.reduce((n, s) => n + tokensOf(s), 0),
      listed: on === mine.length ? 'all' : on === 0 ? 'none' : 'some',
    });
  }
  return { groups: out };
}

/**
 * Groups named by a caller (`?tools=`, `tools_enable`): `all`, or known group names. An
 * unknown name is refused, naming the groups there are.
 */
export function parseGroups(gate: Gate, names: readonly string[]): ReadonlySet<string> | 'all' {
  if (names.includes('all')) return 'all';
  const known = gate.groups();
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length > 0)
    throw invalid(
      `no tool group ${unknown.map((n) => JSON.stringify(n.slice(0, 64))).join(', ')}; the groups are ${[...known.keys()].join(', ')} (or all)`,
      { field: 'groups' },
    );
  return new Set(names);
}

export const union = (a: ReadonlySet<string> | 'all', b: ReadonlySet<string> | 'all') =>
  a === 'all' || b === 'all' ? 'all' : new Set([...a, ...b]);
