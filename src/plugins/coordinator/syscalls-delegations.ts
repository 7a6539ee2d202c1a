import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';
import { invalid } from '../../vocab/errors.ts';
import { requireZone, zoneId } from './access.ts';
import { createDelegation, listDelegations, revokeDelegation } from './delegations.ts';
import { coordinatorOf } from './syscalls-agents.ts';

/** Delegation edges between agent sessions: narrowing only, revocation cascades. */

const id = z.string().min(1).max(200);
const names = z.array(z.string().min(1).max(500)).max(256);

const constraints = z
  .object({
    resources: names.optional().describe('Resource names the delegation covers (absent: all)'),
    scopes: names.optional().describe('Scope names it grants (absent: all)'),
    expires_at: z.string().max(40).optional().describe('When it ends (ISO 8601)'),
  })
  .strict();

/** `constraints`, or seed 003's `constraints_json` (an object or its JSON text); not both. */
function constraintsOf(i: {
  constraints?: z.infer<typeof constraints> | undefined;
  constraints_json?: z.infer<typeof constraints> | string | undefined;
}): z.infer<typeof constraints> | undefined {
  if (i.constraints_json === undefined) return i.constraints;
  if (i.constraints !== undefined) throw invalid('give constraints or constraints_json, not both');
  let raw: unknown = i.constraints_json;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw invalid('constraints_json: not valid JSON', { field: 'constraints_json' });
    }
  }
  const parsed = constraints.safeParse(raw);
  if (!parsed.success)
    throw invalid(`constraints_json: ${parsed.error.issues.map((x) => x.message).join('; ')}`, {
      field: 'constraints_json',
    });
  return parsed.data;
}

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
    source_agent_id: id.describe('The agent that delegates'),
    target_agent_id: id.describe('The agent delegated to'),
    constraints: constraints
      .optional()
      .describe('Limits of the delegation: resources, scopes (names), expires_at (ISO 8601)'),
    constraints_json: z
      .union([constraints, z.string().max(64 * 1024)])
      .optional()
      .describe('Seed 003’s name for constraints (an object, or its JSON text)'),
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
    const { constraints_json: _json, ...rest } = i;
    const d = await createDelegation(ctx.kernel, coordinatorOf(ctx).tables, {
      ...rest,
      constraints: constraintsOf(i),
    });
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
    agent_id: id.optional().describe('Only the delegations of this agent'),
    limit: z.coerce.number().int().positive().max(1000).optional().describe('Max items'),
    cursor: id.optional().describe('The `next` of the previous page'),
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
  input: z.object({ zoneId, edgeId: id.describe('The delegation id') }),
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
