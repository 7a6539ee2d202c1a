import { z } from 'zod';
import type { PluginInstance, PluginTables } from '../../../contract/plugin.ts';
import type { SyscallContext } from '../../../contract/syscall.ts';
import type { GroupAgents } from '../agents.ts';
import type { Inbound } from '../inbound.ts';
import type { GroupsDb } from '../schema.ts';
import type { GroupSockets } from '../sockets.ts';

/** What the groups plugin's syscalls reach through `ctx.self`. */
export interface GroupsInstance extends PluginInstance {
  agents: GroupAgents;
  sockets: GroupSockets;
  inbound: Inbound;
  tables: PluginTables<GroupsDb>;
  maxDocumentBytes: number;
  /** Routes a group (not an operator) may hold targeting its subtree. */
  maxRoutesPerGroup: number;
}

export const groups = (ctx: SyscallContext) => ctx.self as GroupsInstance;

export const folder = z.string().min(1).max(200).describe('A group folder: main, main/research, …');
export const actingGroup = {
  group: folder
    .optional()
    .describe('Operators: act as this group (a group socket is its own group and ignores this)'),
};
export const text = z.string().min(1).describe('The message');

export const groupView = z.object({
  folder: z.string(),
  name: z.string(),
  zone: z.string(),
  parent: z.string().nullable(),
  depth: z.number(),
  tier: z.number(),
  tierLabel: z.string(),
  rules: z.array(z.string()),
  tools: z.array(z.string()).describe('What its socket lists (its tier, narrowed by its rules)'),
  sessionId: z.string().nullable().describe("Its agent's current session"),
  hasAgent: z.boolean().describe('Whether it has an agent spec of its own (else it inherits its ancestor’s)'),
  createdAt: z.number(),
});

export const routeView = z.object({
  id: z.string(),
  seq: z.number(),
  match: z.string(),
  target: z.string(),
  createdBy: z.string(),
  createdAt: z.number(),
});

export const delivery = z.object({
  sessionId: z.string(),
  how: z
    .enum(['sent', 'resumed', 'started'])
    .describe('Sent to its live agent, reanimated it, or started a new one'),
});
