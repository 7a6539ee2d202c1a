import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';
import { requireZone, zoneId } from './access.ts';
import { createDelegation, listDelegations, revokeDelegation } from './delegations.ts';
import { coordinatorOf } from './syscalls-agents.ts';

/** Delegation edges between agent sessions: narrowing only, revocation cascades. */

const id = z.string().min(1).max(200);
const names = z.array(z.string().min(1).max(500)).max(256);

const edge = z.object({
  id: z.string(),
  zone_id: z.string(),
  source_agent_id: z.string(),
  target_agent_id: z.string(),
  parent_edge_id: z.string().nullable(),
  constraints: z.object({
    resources: z.array(z.string()).optional(),
    scopes: z.array(z.string()).optional(),
    expires_at: z.string().optional(),
  }),
  status: z.enum(['active', 'expired', 'revoked']),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  created_at: z.string(),
});

export const delegationCreate = defineSyscall({
  name: 'delegation_create',
  group: 'coordinator',
  summary: 'Create a delegation edge (a delegated authority can only be narrowed)',
  description:
    'constraints: resources and scopes (absent: all) and expires_at (ISO time). A source that holds delegated authority may only pass on a subset of one of its live incoming edges; a widening is widens_grant (403).',
  input: z.object({
    zoneId,
    source_agent_id: id,
    target_agent_id: id,
    constraints: z
      .object({
        resources: names.optional(),
        scopes: names.optional(),
        expires_at: z.string().max(40).optional(),
      })
      .strict()
      .optional(),
  }),
  output: z.object({ delegation: edge }),
  callers: ['operator'],
  http: { method: 'POST', path: '/zones/:zoneId/delegations' },
  cli: {
    command: ['delegations', 'create'],
    examples: [
      'warren delegations create --zone-id default --source-agent-id ses_a --target-agent-id ses_b --constraints \'{"scopes":["read"]}\'',
    ],
  },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    const d = await createDelegation(ctx.kernel, coordinatorOf(ctx).tables, i);
    coordinatorOf(ctx).poke();
    return { delegation: d };
  },
});

export const delegationList = defineSyscall({
  name: 'delegation_list',
  group: 'coordinator',
  summary: 'List delegation edges (of an agent, or the zone’s)',
  input: z.object({
    zoneId,
    agent_id: id.optional(),
    limit: z.coerce.number().int().positive().max(1000).optional(),
    cursor: id.optional(),
  }),
  output: z.object({ delegations: z.array(edge), next: z.string().nullable() }),
  callers: ['operator'],
  http: { method: 'GET', path: '/zones/:zoneId/delegations' },
  cli: { command: ['delegations', 'list'], examples: ['warren delegations list --zone-id default'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    return listDelegations(ctx.kernel, coordinatorOf(ctx).tables, i.zoneId, i);
  },
});

export const delegationRevoke = defineSyscall({
  name: 'delegation_revoke',
  group: 'coordinator',
  summary: 'Revoke a delegation edge and every edge derived from it',
  input: z.object({ zoneId, edgeId: id }),
  output: z.object({ revoked: z.array(z.string()) }),
  callers: ['operator'],
  http: { method: 'DELETE', path: '/zones/:zoneId/delegations/:edgeId' },
  cli: { command: ['delegations', 'revoke'], positional: ['edgeId'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    const r = await revokeDelegation(ctx.kernel, coordinatorOf(ctx).tables, i.zoneId, i.edgeId);
    coordinatorOf(ctx).poke();
    return r;
  },
});

export const delegationSyscalls = [delegationCreate, delegationList, delegationRevoke];
