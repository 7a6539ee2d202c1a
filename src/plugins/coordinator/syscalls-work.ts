import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';
import { keysetPage } from '../../store/paging.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import { requireZone, zoneId } from './access.ts';
import {
  cancelInvocation,
  completeInvocation,
  enqueueInvocation,
  invocationRow,
  invocationView,
  listInvocations,
} from './invocations.ts';
import { HEALTH, INVOCATION_STATUSES, OUTBOX_STATUSES } from './schema.ts';
import { heartbeat, listServices, registerService, updateService } from './services.ts';
import { coordinatorOf } from './syscalls-agents.ts';

/** Services, invocations and the outbox: REST under /zones/:zoneId, the CLI, and tools for agents. */

const id = z.string().min(1).max(200);
const label = z.string().min(1).max(200);
const list = z.array(z.string().min(1).max(200)).max(64);
const json = z.record(z.string(), z.unknown());

/** A session acts for itself only. */
const selfOnly = (p: Principal, agentId: string) => {
  if (p.kind === 'session' && p.sessionId !== agentId) {
    throw new WarrenError(
      'forbidden',
      `a session manages its own services only (${p.sessionId}, not ${agentId})`,
    );
  }
};

const service = z.object({
  id: z.string(),
  zone_id: z.string(),
  agent_id: z.string(),
  application_id: z.string(),
  endpoint_url: z.string(),
  protocol_versions: z.array(z.string()),
  framework_name: z.string().nullable(),
  framework_version: z.string().nullable(),
  capabilities: z.array(z.string()),
  health: z.enum(HEALTH),
  metadata: json,
  last_heartbeat_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const serviceRegister = defineSyscall({
  name: 'service_register',
  group: 'coordinator',
  summary: 'Register a service endpoint of an agent (unique on zone + application + endpoint)',
  input: z.object({
    zoneId,
    agentId: id.describe('The agent (its session id)'),
    endpoint_url: z.string().url().max(2000).describe('Where the service answers (URL)'),
    protocol_versions: list.optional().describe('Protocol versions it speaks'),
    framework_name: label.optional().describe('The agent framework it runs on'),
    framework_version: label.optional().describe("That framework's version"),
    capabilities: list.optional().describe('What it can do (free labels)'),
    metadata: json.optional().describe('Free JSON about it (merged on update)'),
    health: z.enum(HEALTH).optional().describe('Its health as the agent reports it'),
  }),
  output: z.object({ service }),
  callers: ['operator', 'session'],
  http: { method: 'POST', path: '/zones/:zoneId/agents/:agentId/services' },
  cli: {
    command: ['services', 'register'],
    examples: [
      'warren services register --zone-id default --agent-id ses_… --endpoint-url http://127.0.0.1:9000',
    ],
  },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    selfOnly(ctx.principal, i.agentId);
    return { service: await registerService(ctx.kernel, coordinatorOf(ctx).tables, i) };
  },
});

export const serviceList = defineSyscall({
  name: 'service_list',
  group: 'coordinator',
  summary: 'List the services of an agent',
  input: z.object({ zoneId, agentId: id.describe('The agent (its session id)') }),
  output: z.object({ services: z.array(service) }),
  callers: ['operator', 'session'],
  http: { method: 'GET', path: '/zones/:zoneId/agents/:agentId/services' },
  cli: {
    command: ['services', 'list'],
    examples: ['warren services list --zone-id default --agent-id ses_…'],
  },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    // An agent's services are its session's data: read where session_show would let it.
    if (ctx.principal.kind === 'session') await ctx.kernel.requireReadable(ctx.principal, i.agentId);
    return { services: await listServices(coordinatorOf(ctx).tables, i.zoneId, i.agentId) };
  },
});

export const serviceUpdate = defineSyscall({
  name: 'service_update',
  group: 'coordinator',
  summary: 'Update a service’s metadata (merged) or health',
  input: z.object({
    zoneId,
    agentId: id.describe('The agent (its session id)'),
    serviceId: id.describe('The service id (service_register gave it)'),
    metadata: json.optional().describe('Free JSON about it (merged on update)'),
    health: z.enum(HEALTH).optional().describe('Its health as the agent reports it'),
  }),
  output: z.object({ service }),
  callers: ['operator', 'session'],
  http: { method: 'PATCH', path: '/zones/:zoneId/agents/:agentId/services/:serviceId' },
  cli: {
    command: ['services', 'update'],
    examples: [
      'warren services update --zone-id default --agent-id ses_… --service-id svc_… --health degraded',
    ],
  },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    selfOnly(ctx.principal, i.agentId);
    const { tables } = coordinatorOf(ctx);
    return { service: await updateService(ctx.kernel, tables, i.zoneId, i.agentId, i.serviceId, i) };
  },
});

export const serviceHeartbeat = defineSyscall({
  name: 'service_heartbeat',
  group: 'coordinator',
  summary: 'Record a heartbeat of a service (a service silent too long becomes unhealthy by itself)',
  input: z.object({
    zoneId,
    agentId: id.describe('The agent (its session id)'),
    serviceId: id.describe('The service id'),
    health: z.enum(HEALTH).optional().describe('Its health as the agent reports it'),
  }),
  output: z.object({ service }),
  callers: ['operator', 'session'],
  http: { method: 'POST', path: '/zones/:zoneId/agents/:agentId/services/:serviceId/heartbeat' },
  cli: {
    command: ['services', 'heartbeat'],
    examples: ['warren services heartbeat --zone-id default --agent-id ses_… --service-id svc_…'],
  },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    selfOnly(ctx.principal, i.agentId);
    const { tables } = coordinatorOf(ctx);
    return { service: await heartbeat(ctx.kernel, tables, i.zoneId, i.agentId, i.serviceId, i.health) };
  },
});

const invocation = z.object({
  id: z.string(),
  zone_id: z.string(),
  service_id: z.string(),
  source_session_id: z.string().nullable(),
  target_session_id: z.string(),
  idempotency_key: z.string(),
  method: z.string(),
  params: z.unknown(),
  status: z.enum(INVOCATION_STATUSES),
  attempts: z.number(),
  max_attempts: z.number(),
  timeout_ms: z.number().nullable(),
  retry_policy: z.unknown(),
  error: z.unknown(),
  result: z.unknown(),
  deadline_at: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const invocationEnqueue = defineSyscall({
  name: 'invocation_enqueue',
  group: 'coordinator',
  summary: 'Enqueue an invocation of a service (idempotent on zone + service + key)',
  description:
    'The target agent receives it as an [INVOCATION] message on its stdin and answers with invocation_complete. timeout_ms sets each attempt’s deadline; retry_policy (max_attempts, initial_backoff_ms, max_backoff_ms, multiplier) retries failed or timed-out attempts with jittered exponential backoff, then the invocation is dead.',
  input: z.object({
    zoneId,
    service_id: id.describe('The service to invoke (service_list)'),
    idempotency_key: z.string().min(1).max(255).describe('At most one invocation per key'),
    method: z.string().min(1).max(200).describe('The method to call'),
    params: z.unknown().optional().describe('Its arguments (any JSON)'),
    timeout_ms: z.coerce
      .number()
      .int()
      .positive()
      .max(86_400_000)
      .optional()
      .describe("Each attempt's deadline (ms)"),
    retry_policy: z
      .object({
        max_attempts: z.number().int().positive().max(100).optional(),
        initial_backoff_ms: z.number().int().nonnegative().max(3_600_000).optional(),
        max_backoff_ms: z.number().int().nonnegative().max(86_400_000).optional(),
        multiplier: z.number().min(1).max(10).optional(),
      })
      .optional()
      .describe(
        'Retries with jittered backoff: max_attempts, initial_backoff_ms, max_backoff_ms, multiplier',
      ),
  }),
  output: z.object({ invocation, created: z.boolean() }),
  callers: ['operator', 'session'],
  http: { method: 'POST', path: '/zones/:zoneId/invocations' },
  cli: {
    command: ['invocations', 'enqueue'],
    examples: [
      'warren invocations enqueue --zone-id default --service-id svc_… --idempotency-key k1 --method ping',
    ],
  },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    if (JSON.stringify(i.params ?? {}).length > 256 * 1024)
      throw new WarrenError('invalid_input', 'params is over 256 KiB');
    const source = ctx.principal.kind === 'session' ? ctx.principal.sessionId : undefined;
    const r = await enqueueInvocation(ctx.kernel, coordinatorOf(ctx).tables, {
      ...i,
      source_session_id: source,
    });
    // A repeat returns the original, to its own caller only: a session that hits another
    // caller's key must not read that invocation's params or result through it.
    if (!r.created && source !== undefined && r.invocation.source_session_id !== source) {
      throw new WarrenError(
        'conflict',
        `idempotency key ${JSON.stringify(i.idempotency_key)} is taken for this service by another caller`,
      );
    }
    coordinatorOf(ctx).pokeInvocations();
    return r;
  },
});

export const invocationGet = defineSyscall({
  name: 'invocation_get',
  group: 'coordinator',
  summary: 'Fetch an invocation’s status',
  input: z.object({ zoneId, id: id.describe('The invocation id') }),
  output: z.object({ invocation }),
  callers: ['operator', 'session'],
  http: { method: 'GET', path: '/zones/:zoneId/invocations/:id' },
  cli: { command: ['invocations', 'get'], positional: ['id'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    const row = await invocationRow(coordinatorOf(ctx).tables.reader, i.zoneId, i.id);
    const p = ctx.principal;
    if (
      p.kind === 'session' &&
      p.sessionId !== row.target_session_id &&
      p.sessionId !== row.source_session_id
    ) {
      throw new WarrenError('not_found', `invocation ${i.id} does not exist in zone ${i.zoneId}`);
    }
    return { invocation: invocationView(row) };
  },
});

export const invocationList = defineSyscall({
  name: 'invocation_list',
  group: 'coordinator',
  summary: 'List invocations (a session: those it is the target of)',
  input: z.object({
    zoneId,
    status: z.enum(INVOCATION_STATUSES).optional().describe('Only these in this status'),
    limit: z.coerce.number().int().positive().max(1000).optional().describe('Max items'),
    cursor: id.optional().describe('The `next` of the previous page'),
  }),
  output: z.object({ invocations: z.array(invocation), next: z.string().nullable() }),
  callers: ['operator', 'session'],
  http: { method: 'GET', path: '/zones/:zoneId/invocations' },
  cli: {
    command: ['invocations', 'list'],
    examples: ['warren invocations list --zone-id default --status dead'],
  },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    return listInvocations(coordinatorOf(ctx).tables, ctx.principal, i.zoneId, i);
  },
});

export const invocationCancel = defineSyscall({
  name: 'invocation_cancel',
  group: 'coordinator',
  summary: 'Cancel a pending or running invocation',
  input: z.object({ zoneId, id: id.describe('The invocation id') }),
  output: z.object({ invocation }),
  callers: ['operator', 'session'],
  http: { method: 'POST', path: '/zones/:zoneId/invocations/:id/cancel' },
  cli: { command: ['invocations', 'cancel'], positional: ['id'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    const p = ctx.principal;
    if (p.kind === 'session') {
      const row = await invocationRow(coordinatorOf(ctx).tables.reader, i.zoneId, i.id);
      if (row.source_session_id !== p.sessionId)
        throw new WarrenError('forbidden', 'only its source cancels an invocation');
    }
    return { invocation: await cancelInvocation(coordinatorOf(ctx).tables, i.zoneId, i.id) };
  },
});

export const invocationComplete = defineSyscall({
  name: 'invocation_complete',
  group: 'coordinator',
  summary: 'Report an invocation’s result (only its target session may)',
  description:
    'Answer an [INVOCATION] message: status succeeded with a result, or failed with an error (retried by its retry policy, else failed or dead).',
  input: z.object({
    zoneId,
    id: id.describe('The invocation id (from its [INVOCATION] message)'),
    status: z.enum(['succeeded', 'failed']).describe('Only these in this status'),
    result: z.unknown().optional().describe('The result (any JSON)'),
    error: z.unknown().optional().describe('Why it failed'),
  }),
  output: z.object({ invocation }),
  callers: ['session'],
  http: { method: 'POST', path: '/zones/:zoneId/invocations/:id/complete' },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    if (JSON.stringify(i.result ?? null).length > 1024 * 1024)
      throw new WarrenError('invalid_input', 'result is over 1 MiB');
    if (JSON.stringify(i.error ?? null).length > 64 * 1024)
      throw new WarrenError('invalid_input', 'error is over 64 KiB');
    const c = coordinatorOf(ctx);
    const r = await completeInvocation(c.tables, ctx.principal, c.random, i);
    c.pokeInvocations();
    return { invocation: r };
  },
});

const outboxRow = z.object({
  id: z.string(),
  zone: z.string(),
  topic: z.string(),
  key: z.string(),
  type: z.string(),
  status: z.enum(OUTBOX_STATUSES),
  attempts: z.number(),
  last_error: z.string().nullable(),
  created_at: z.number(),
  delivered_at: z.number().nullable(),
});

export const outboxList = defineSyscall({
  name: 'outbox_list',
  group: 'coordinator',
  summary: 'List a zone’s outbox events (dead ones: those that ran out of attempts)',
  input: z.object({
    zoneId,
    status: z.enum(OUTBOX_STATUSES).optional().describe('Only these in this status'),
    limit: z.coerce.number().int().positive().max(1000).optional().describe('Max items'),
    cursor: id.optional().describe('The `next` of the previous page'),
  }),
  output: z.object({ events: z.array(outboxRow), next: z.string().nullable() }),
  callers: ['operator'],
  http: { method: 'GET', path: '/zones/:zoneId/outbox' },
  cli: { command: ['outbox', 'list'], examples: ['warren outbox list --zone-id default --status dead'] },
  handler: async (ctx, i) => {
    requireZone(ctx.principal, i.zoneId);
    const limit = i.limit ?? 100;
    let q = coordinatorOf(ctx)
      .tables.reader.selectFrom('coordinator_outbox')
      .select([
        'id',
        'zone',
        'topic',
        'key',
        'type',
        'status',
        'attempts',
        'last_error',
        'created_at',
        'delivered_at',
      ])
      .where('zone', '=', i.zoneId);
    if (i.status) q = q.where('status', '=', i.status);
    if (i.cursor) q = q.where('id', '>', i.cursor);
    const { items, next } = await keysetPage(limit, (n) => q.orderBy('id').limit(n).execute());
    return { events: items, next };
  },
});

export const workSyscalls = [
  serviceRegister,
  serviceList,
  serviceUpdate,
  serviceHeartbeat,
  invocationEnqueue,
  invocationGet,
  invocationList,
  invocationCancel,
  invocationComplete,
  outboxList,
];
