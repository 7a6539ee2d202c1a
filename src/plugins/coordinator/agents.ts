import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Kernel } from '../../kernel/kernel.ts';
import { keysetPage } from '../../store/paging.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import type { CoordinatorConfig } from './config.ts';
import { TOPICS } from './config.ts';
import { enqueue } from './outbox.ts';
import { iso } from './rows.ts';
import type {
  AgentStatus,
  CoordAgentsTable,
  CoordinatorDb,
  CoordinatorTables,
  CoordinatorTx,
} from './schema.ts';

/** What a client asks for at spawn (the seed's fields, plus how warren runs the agent). */
export interface SpawnAgentInput {
  zoneId: string;
  application_id: string;
  session_sid?: string | undefined;
  parent_id?: string | undefined;
  capabilities?: string[] | undefined;
  ttl_seconds?: number | undefined;
  title?: string | undefined;
  runtime?: string | undefined;
  config?: Record<string, unknown> | undefined;
  idempotencyKey?: string | undefined;
}

/** An agent session as the API returns it (the seed's names). */
export interface AgentView {
  id: string;
  zone_id: string;
  application_id: string;
  session_sid: string | null;
  parent_id: string | null;
  status: AgentStatus;
  depth: number;
  capabilities: string[];
  ttl_seconds: number | null;
  spawned_at: string;
  suspended_at: string | null;
  terminated_at: string | null;
  created_at: string;
  updated_at: string;
}

export const agentView = (r: CoordAgentsTable): AgentView => ({
  id: r.session_id,
  zone_id: r.zone,
  application_id: r.application_id,
  session_sid: r.session_sid,
  parent_id: r.parent_id,
  status: r.status,
  depth: r.depth,
  capabilities: JSON.parse(r.capabilities) as string[],
  ttl_seconds: r.ttl_seconds,
  spawned_at: iso(r.spawned_at) as string,
  suspended_at: iso(r.suspended_at),
  terminated_at: iso(r.terminated_at),
  created_at: iso(r.created_at) as string,
  updated_at: iso(r.updated_at) as string,
});

/** A script agent that stays until it is terminated: what a spawn runs unless told otherwise. */
const STANDING = { script: { steps: [{ listen: {} }] } };

/** The zone's operator the coordinator acts as (the caller's name, kept for the log). */
export const actingIn = (p: Principal, zone: string): Principal =>
  p.kind === 'operator'
    ? { kind: 'operator', name: p.name, zone }
    : { kind: 'operator', name: `session:${p.sessionId}`, zone };

/** The request's fingerprint: a repeat with the same key must carry the same body. */
const requestHash = (i: SpawnAgentInput): string => {
  const { idempotencyKey: _k, ...rest } = i;
  const sorted = Object.fromEntries(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
};

const limitError = (limit: string, max: number, message: string) =>
  new WarrenError('limit_exceeded', message, { limit, max });

/**
 * Spawn an agent session: a warren session (so `warren ps` shows it) plus its coordinator
 * row, in the kernel's spawn transaction, under the zone's lock (the SQLite writer, the
 * zone row's lock on PostgreSQL): the limits are checked where nothing can slip in between,
 * and an Idempotency-Key creates at most once across callers and server processes.
 */
export async function spawnAgent(
  kernel: Kernel,
  tables: CoordinatorTables,
  cfg: CoordinatorConfig,
  caller: Principal,
  i: SpawnAgentInput,
): Promise<{ agent: AgentView; created: boolean }> {
  const zone = i.zoneId;
  const hash = requestHash(i);
  const limits = cfg.limits;
  let row: CoordAgentsTable | undefined;
  // The agent row is written in the spawn's own unit (this plugin's writer): both, or neither.
  const r = await kernel.spawnWith(
    tables,
    actingIn(caller, zone),
    {
      runtime: i.runtime ?? 'script',
      config: i.config ?? (i.runtime ? {} : STANDING),
      title: i.title ?? `agent ${i.application_id}`,
      // Its agents offer services and serve invocations: the coordinator's tools are theirs alone.
      toolGroups: ['coordinator'],
      ...(i.ttl_seconds !== undefined ? { ttlSeconds: i.ttl_seconds } : {}),
      ...(i.idempotencyKey ? { idempotencyKey: `coord:${i.idempotencyKey}` } : {}),
    },
    async (tx, spawned) => {
      if (!spawned.created) {
        row = await tx.db
          .selectFrom('coordinator_agents')
          .selectAll()
          .where('session_id', '=', spawned.session.id)
          .executeTakeFirst();
        if (row && row.request_hash !== hash) {
          throw new WarrenError(
            'idempotency_mismatch',
            'this Idempotency-Key was used with a different request body',
            { idempotencyKey: i.idempotencyKey },
          );
        }
        if (row) return;
      }
      row = await checkAndInsert(tx, limits, zone, spawned.session.id, i, hash);
    },
  );
  if (!row) throw new WarrenError('internal', 'spawn committed without its agent row');
  return { agent: agentView(row), created: r.created };
}

async function checkAndInsert(
  tx: CoordinatorTx,
  limits: CoordinatorConfig['limits'],
  zone: string,
  sessionId: string,
  i: SpawnAgentInput,
  hash: string,
): Promise<CoordAgentsTable> {
  const db = tx.db;
  const live = () =>
    db.selectFrom('coordinator_agents').where('zone', '=', zone).where('status', '!=', 'terminated');
  const count = async (q: ReturnType<typeof live>) =>
    Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  let depth = 1;
  if (i.parent_id !== undefined) {
    const parent = await db
      .selectFrom('coordinator_agents')
      .selectAll()
      .where('session_id', '=', i.parent_id)
      .where('zone', '=', zone)
      .executeTakeFirst();
    if (!parent) throw new WarrenError('not_found', `agent ${i.parent_id} does not exist in zone ${zone}`);
    if (parent.status === 'terminated')
      throw new WarrenError('conflict', `parent agent ${i.parent_id} is terminated`, { id: i.parent_id });
    depth = parent.depth + 1;
    if (depth > limits.maxDepth)
      throw limitError(
        'maxDepth',
        limits.maxDepth,
        `spawn would reach depth ${depth}; the limit is ${limits.maxDepth}`,
      );
    const children = await count(live().where('parent_id', '=', i.parent_id));
    if (children >= limits.maxChildren)
      throw limitError(
        'maxChildren',
        limits.maxChildren,
        `agent ${i.parent_id} already has ${children} live children; the limit is ${limits.maxChildren}`,
      );
  }
  const inZone = await count(live());
  if (inZone >= limits.maxPerZone)
    throw limitError(
      'maxPerZone',
      limits.maxPerZone,
      `zone ${zone} already has ${inZone} live agent sessions; the limit is ${limits.maxPerZone}`,
    );
  const ofApp = await count(live().where('application_id', '=', i.application_id));
  if (ofApp >= limits.maxPerApplication)
    throw limitError(
      'maxPerApplication',
      limits.maxPerApplication,
      `application ${i.application_id} already has ${ofApp} live agent sessions in zone ${zone}; the limit is ${limits.maxPerApplication}`,
    );
  const row: CoordAgentsTable = {
    session_id: sessionId,
    zone,
    application_id: i.application_id,
    session_sid: i.session_sid ?? null,
    parent_id: i.parent_id ?? null,
    status: 'active',
    depth,
    capabilities: JSON.stringify(i.capabilities ?? []),
    ttl_seconds: i.ttl_seconds ?? null,
    idempotency_key: i.idempotencyKey ?? null,
    request_hash: hash,
    spawned_at: tx.now,
    suspended_at: null,
    terminated_at: null,
    created_at: tx.now,
    updated_at: tx.now,
  };
  await db.insertInto('coordinator_agents').values(row).execute();
  return row;
}

/** One agent of a zone; not_found for another zone's (a zone never learns of another's ids). */
export async function agentRow(
  db: Kysely<CoordinatorDb>,
  zone: string,
  id: string,
): Promise<CoordAgentsTable> {
  const row = await db
    .selectFrom('coordinator_agents')
    .selectAll()
    .where('session_id', '=', id)
    .where('zone', '=', zone)
    .executeTakeFirst();
  if (!row)
    throw new WarrenError('not_found', `agent ${id} does not exist in zone ${zone}`, { what: 'agent', id });
  return row;
}

/** A zone's agents by id, a page at a time (keyset: costs the page, not the zone). */
export async function listAgents(
  tables: CoordinatorTables,
  zone: string,
  q: {
    limit?: number | undefined;
    after?: string | undefined;
    status?: AgentStatus | undefined;
    application_id?: string | undefined;
  },
): Promise<{ agents: AgentView[]; next: string | null }> {
  const limit = q.limit ?? 100;
  let sel = tables.reader.selectFrom('coordinator_agents').selectAll().where('zone', '=', zone);
  if (q.after) sel = sel.where('session_id', '>', q.after);
  if (q.status) sel = sel.where('status', '=', q.status);
  if (q.application_id) sel = sel.where('application_id', '=', q.application_id);
  const { items, next } = await keysetPage(
    limit,
    (n) => sel.orderBy('session_id').limit(n).execute(),
    (r) => r.session_id,
  );
  return { agents: items.map(agentView), next };
}

/** Suspend (SIGSTOP its warren session) or resume (SIGCONT) an agent. */
export async function setSuspended(
  kernel: Kernel,
  tables: CoordinatorTables,
  caller: Principal,
  zone: string,
  id: string,
  suspend: boolean,
): Promise<AgentView> {
  const row = await agentRow(tables.reader, zone, id);
  if (row.status === 'terminated') throw new WarrenError('conflict', `agent ${id} is terminated`, { id });
  if (suspend === (row.status === 'suspended')) return agentView(row);
  const session = await kernel.session(actingIn(caller, zone), id);
  if (suspend && session.status !== 'stopped')
    await kernel.stopOrContinue(actingIn(caller, zone), id, 'SIGSTOP');
  if (!suspend && session.status === 'suspended')
    await kernel.stopOrContinue(actingIn(caller, zone), id, 'SIGCONT');
  const updated = await tables.write(async (tx) => {
    const patch = suspend
      ? { status: 'suspended' as const, suspended_at: tx.now, updated_at: tx.now }
      : { status: 'active' as const, suspended_at: null, updated_at: tx.now };
    await tx.db
      .updateTable('coordinator_agents')
      .set(patch)
      .where('session_id', '=', id)
      .where('status', '!=', 'terminated')
      .execute();
    return agentRow(tx.db, zone, id);
  });
  return agentView(updated);
}

/**
 * Terminate agents and every descendant, in one transaction: each one's warren session is
 * killed, its row marked terminated and one `caracal.sessions.revoke` event written to the
 * outbox — all of it commits together or none does.
 */
export async function terminateIn(
  tx: CoordinatorTx,
  kernel: Kernel,
  zone: string,
  roots: readonly string[],
  actor: string,
  reason: string,
): Promise<string[]> {
  const db = tx.db;
  // The subtree, breadth first (bounded by the limits: depth and children per agent).
  const all: string[] = [...roots];
  const seen = new Set(all);
  for (let frontier = [...roots]; frontier.length > 0; ) {
    const children = await db
      .selectFrom('coordinator_agents')
      .select('session_id')
      .where('zone', '=', zone)
      .where('parent_id', 'in', frontier)
      .execute();
    frontier = children.map((c) => c.session_id).filter((id) => !seen.has(id));
    for (const id of frontier) {
      seen.add(id);
      all.push(id);
    }
  }
  const done: string[] = [];
  for (const id of all) {
    const r = await db
      .updateTable('coordinator_agents')
      .set({ status: 'terminated', terminated_at: tx.now, updated_at: tx.now })
      .where('session_id', '=', id)
      .where('zone', '=', zone)
      .where('status', '!=', 'terminated')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) continue;
    await kernel.stopIn(tx, id, actor, false);
    done.push(id);
  }
  await enqueue(
    tx,
    kernel.ids,
    done.map((id) => ({
      zone,
      topic: TOPICS.sessionsRevoke,
      key: id,
      type: 'agent.terminated',
      payload: { zone_id: zone, session_id: id, reason, terminated_at: new Date(tx.now).toISOString() },
    })),
  );
  return done;
}
