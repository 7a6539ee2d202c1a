import { z } from 'zod';
import { defineSyscall, type SyscallContext } from '../../contract/syscall.ts';
import { principalId } from '../../vocab/principal.ts';
import { requireZone, zoneId } from './access.ts';
import {
  actingIn,
  agentRow,
  agentView,
  listAgents,
  setSuspended,
  spawnAgent,
  terminateIn,
} from './agents.ts';
import type { Coordinator } from './coordinator.ts';
import { AGENT_STATUSES } from './schema.ts';

/** Agent sessions through the coordinator: the seed's routes under /zones/:zoneId/agents. */

export const coordinatorOf = (ctx: SyscallContext) => ctx.self as Coordinator;

const id = z.string().min(1).max(200);
const label = z.string().min(1).max(200);

export const agent = z.object({
  id: z.string(),
  zone_id: z.string(),
  application_id: z.string(),
  session_sid: z.string().nullable(),
  parent_id: z.string().nullable(),
  status: z.enum(AGENT_STATUSES),
  depth: z.number(),
  capabilities: z.array(z.string()),
  ttl_seconds: z.number().nullable(),
  spawned_at: z.string(),
  suspended_at: z.string().nullable(),
  terminated_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const agentSpawn = defineSyscall({
  name: 'agent_spawn',
  group: 'coordinator',
  summary: 'Spawn an agent session in a zone (a warren session with the coordinator’s fields)',
  description:
    'Limits (depth, children per agent, agents per zone and per application) are checked in the spawn’s transaction under the zone’s lock; exceeding one is limit_exceeded naming it. With an Idempotency-Key header (idempotencyKey) at most one session is created per key in the zone; a repeat returns the original, a repeat with another body is idempotency_mismatch (422). Without runtime the session is a standing script agent.',
  input: z.object({
    zoneId,
    application_id: label.describe('The application it belongs to'),
    session_sid: label.optional().describe('Your own label for its session'),
    parent_id: id.optional().describe('The agent it is spawned under'),
    capabilities: z
      .array(z.string().min(1).max(200))
      .max(64)
      .optional()
      .describe('What it can do (free labels)'),
    ttl_seconds: z.coerce
      .number()
      .int()
      .positive()
      .max(31_536_000)
      .optional()
      .describe('It is stopped this long after spawn'),
    title: z.string().max(200).optional().describe('A short name for it'),
    runtime: z.string().min(1).max(64).optional().describe('How warren runs it (default: a standing script)'),
    config: z.record(z.string(), z.unknown()).optional().describe('The runtime’s configuration'),
    idempotencyKey: z.string().min(1).max(255).optional().describe('The Idempotency-Key header'),
  }),
  output: z.object({ agent, created: z.boolean() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/zones/:zoneId/agents', headers: { 'idempotency-key': 'idempotencyKey' } },
  cli: {
    command: ['agents', 'spawn'],
    examples: ['warren agents spawn --zone-id default --application-id app1 --ttl-seconds 3600'],
  },
  async handler(ctx, i) {
    requireZone(ctx.principal, i.zoneId);
    return spawnAgent(ctx.kernel, coordinatorOf(ctx).tables, coordinatorOf(ctx).config, ctx.principal, i);
  },
});

export const agentList = defineSyscall({
  name: 'agent_list',
  group: 'coordinator',
  summary: 'List a zone’s agent sessions (cursor pages, by id)',
  input: z.object({
    zoneId,
    status: z.enum(AGENT_STATUSES).optional().describe('Only these in this status'),
    application_id: label.optional().describe('The application it belongs to'),
    limit: z.coerce.number().int().positive().max(1000).optional().describe('Max items'),
    cursor: id.optional().describe('The `next` of the previous page'),
  }),
  output: z.object({ agents: z.array(agent), next: z.string().nullable() }),
  callers: ['operator'],
  http: { method: 'GET', path: '/zones/:zoneId/agents' },
  cli: { command: ['agents', 'list'], examples: ['warren agents list --zone-id default'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    return listAgents(coordinatorOf(ctx).tables, i.zoneId, { ...i, after: i.cursor });
  },
});

export const agentGet = defineSyscall({
  name: 'agent_get',
  group: 'coordinator',
  summary: 'One agent session of a zone',
  input: z.object({ zoneId, id: id.describe('The agent id (its session id)') }),
  output: z.object({ agent }),
  callers: ['operator', 'session'],
  http: { method: 'GET', path: '/zones/:zoneId/agents/:id' },
  cli: {
    command: ['agents', 'get'],
    positional: ['id'],
    examples: ['warren agents get ses_01j… --zone-id default'],
  },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    // An agent is a session: a session reads one only where session_show would let it.
    if (ctx.principal.kind === 'session') await ctx.kernel.requireReadable(ctx.principal, i.id);
    return { agent: agentView(await agentRow(coordinatorOf(ctx).tables.reader, i.zoneId, i.id)) };
  },
});

export const agentSuspend = defineSyscall({
  name: 'agent_suspend',
  group: 'coordinator',
  summary: 'Suspend an agent session (SIGSTOP its warren session)',
  input: z.object({ zoneId, id: id.describe('The agent id (its session id)') }),
  output: z.object({ agent }),
  callers: ['operator'],
  http: { method: 'POST', path: '/zones/:zoneId/agents/:id/suspend' },
  cli: { command: ['agents', 'suspend'], positional: ['id'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    return {
      agent: await setSuspended(ctx.kernel, coordinatorOf(ctx).tables, ctx.principal, i.zoneId, i.id, true),
    };
  },
});

export const agentResume = defineSyscall({
  name: 'agent_resume',
  group: 'coordinator',
  summary: 'Resume a suspended agent session (SIGCONT)',
  input: z.object({ zoneId, id: id.describe('The agent id (its session id)') }),
  output: z.object({ agent }),
  callers: ['operator'],
  http: { method: 'POST', path: '/zones/:zoneId/agents/:id/resume' },
  cli: { command: ['agents', 'resume'], positional: ['id'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    return {
      agent: await setSuspended(ctx.kernel, coordinatorOf(ctx).tables, ctx.principal, i.zoneId, i.id, false),
    };
  },
});

export const agentDelete = defineSyscall({
  name: 'agent_delete',
  group: 'coordinator',
  summary: 'Terminate an agent session and its whole subtree (one revoke event each)',
  input: z.object({ zoneId, id: id.describe('The agent id (its session id)') }),
  output: z.object({ terminated: z.array(z.string()) }),
  callers: ['operator'],
  http: { method: 'DELETE', path: '/zones/:zoneId/agents/:id' },
  cli: { command: ['agents', 'delete'], positional: ['id'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    const actor = principalId(actingIn(ctx.principal, i.zoneId));
    const terminated = await coordinatorOf(ctx).tables.write(async (tx) => {
      await agentRow(tx.db, i.zoneId, i.id);
      return terminateIn(tx, ctx.kernel, i.zoneId, [i.id], actor, 'deleted');
    });
    coordinatorOf(ctx).poke();
    return { terminated };
  },
});

export const agentSyscalls = [agentSpawn, agentList, agentGet, agentSuspend, agentResume, agentDelete];
