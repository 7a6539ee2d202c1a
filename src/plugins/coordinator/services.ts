import type { Kysely } from 'kysely';
import type { Kernel } from '../../kernel/kernel.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { agentRow } from './agents.ts';
import { enqueue } from './outbox.ts';
import { iso } from './rows.ts';
import type {
  CoordinatorDb,
  CoordinatorTables,
  CoordinatorTx,
  CoordServicesTable,
  Health,
} from './schema.ts';

/** Health changes go out on this topic (beyond the seed's two). */
export const SERVICE_HEALTH_TOPIC = 'caracal.services.health';

export interface RegisterInput {
  zoneId: string;
  agentId: string;
  endpoint_url: string;
  protocol_versions?: string[] | undefined;
  framework_name?: string | undefined;
  framework_version?: string | undefined;
  capabilities?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
  health?: Health | undefined;
}

export const serviceView = (r: CoordServicesTable) => ({
  id: r.id,
  zone_id: r.zone,
  agent_id: r.agent_id,
  application_id: r.application_id,
  endpoint_url: r.endpoint_url,
  protocol_versions: JSON.parse(r.protocol_versions) as string[],
  framework_name: r.framework_name,
  framework_version: r.framework_version,
  capabilities: JSON.parse(r.capabilities) as string[],
  health: r.health,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  last_heartbeat_at: iso(r.last_heartbeat_at),
  created_at: iso(r.created_at) as string,
  updated_at: iso(r.updated_at) as string,
});

/** Register a service of an agent; unique on zone + application + endpoint (a conflict is 409). */
export async function registerService(kernel: Kernel, tables: CoordinatorTables, i: RegisterInput) {
  return tables.write(async (tx) => {
    const agent = await agentRow(tx.db, i.zoneId, i.agentId);
    if (agent.status === 'terminated') throw new WarrenError('conflict', `agent ${i.agentId} is terminated`);
    const db = tx.db;
    const taken = await db
      .selectFrom('coordinator_services')
      .select('id')
      .where('zone', '=', i.zoneId)
      .where('application_id', '=', agent.application_id)
      .where('endpoint_url', '=', i.endpoint_url)
      .executeTakeFirst();
    if (taken) {
      throw new WarrenError('conflict', `${i.endpoint_url} is already registered for this application`, {
        serviceId: taken.id,
      });
    }
    const row: CoordServicesTable = {
      id: kernel.ids.id('svc'),
      zone: i.zoneId,
      agent_id: i.agentId,
      application_id: agent.application_id,
      endpoint_url: i.endpoint_url,
      protocol_versions: JSON.stringify(i.protocol_versions ?? []),
      framework_name: i.framework_name ?? null,
      framework_version: i.framework_version ?? null,
      capabilities: JSON.stringify(i.capabilities ?? []),
      health: i.health ?? 'starting',
      silent: 0,
      metadata: JSON.stringify(i.metadata ?? {}),
      last_heartbeat_at: tx.now,
      created_at: tx.now,
      updated_at: tx.now,
    };
    await db.insertInto('coordinator_services').values(row).execute();
    return serviceView(row);
  });
}

export async function serviceRow(
  db: Kysely<CoordinatorDb>,
  zone: string,
  agentId: string | undefined,
  id: string,
) {
  let q = db.selectFrom('coordinator_services').selectAll().where('id', '=', id).where('zone', '=', zone);
  if (agentId !== undefined) q = q.where('agent_id', '=', agentId);
  const row = await q.executeTakeFirst();
  if (!row) throw new WarrenError('not_found', `service ${id} does not exist here`, { what: 'service', id });
  return row;
}

export async function listServices(tables: CoordinatorTables, zone: string, agentId: string) {
  await agentRow(tables.reader, zone, agentId);
  const rows = await tables.reader
    .selectFrom('coordinator_services')
    .selectAll()
    .where('zone', '=', zone)
    .where('agent_id', '=', agentId)
    .orderBy('id')
    .limit(1000)
    .execute();
  return rows.map(serviceView);
}

/** A health change and its event, in one transaction. */
async function setHealth(
  tx: CoordinatorTx,
  kernel: Kernel,
  row: CoordServicesTable,
  health: Health,
  why: string,
) {
  if (row.health === health) return;
  await enqueue(tx, kernel.ids, [
    {
      zone: row.zone,
      topic: SERVICE_HEALTH_TOPIC,
      key: row.id,
      type: 'service.health',
      payload: { service_id: row.id, agent_id: row.agent_id, from: row.health, to: health, reason: why },
    },
  ]);
}

/** PATCH: metadata (merged) and health. */
export async function updateService(
  kernel: Kernel,
  tables: CoordinatorTables,
  zone: string,
  agentId: string,
  id: string,
  patch: { metadata?: Record<string, unknown> | undefined; health?: Health | undefined },
) {
  return tables.write(async (tx) => {
    const row = await serviceRow(tx.db, zone, agentId, id);
    const metadata = patch.metadata
      ? { ...JSON.parse(row.metadata), ...patch.metadata }
      : JSON.parse(row.metadata);
    const health = patch.health ?? row.health;
    await setHealth(tx, kernel, row, health, 'updated');
    await tx.db
      .updateTable('coordinator_services')
      .set({ metadata: JSON.stringify(metadata), health, silent: 0, updated_at: tx.now })
      .where('id', '=', id)
      .execute();
    return serviceView(await serviceRow(tx.db, zone, agentId, id));
  });
}

/** A heartbeat: the time, optionally a health; a service held unhealthy for silence recovers. */
export async function heartbeat(
  kernel: Kernel,
  tables: CoordinatorTables,
  zone: string,
  agentId: string,
  id: string,
  health?: Health,
) {
  return tables.write(async (tx) => {
    const row = await serviceRow(tx.db, zone, agentId, id);
    const next: Health = health ?? (row.silent === 1 || row.health === 'starting' ? 'healthy' : row.health);
    await setHealth(tx, kernel, row, next, row.silent === 1 ? 'recovered' : 'heartbeat');
    await tx.db
      .updateTable('coordinator_services')
      .set({ health: next, silent: 0, last_heartbeat_at: tx.now, updated_at: tx.now })
      .where('id', '=', id)
      .execute();
    return serviceView(await serviceRow(tx.db, zone, agentId, id));
  });
}

/** The health watcher: services silent for longer than `silenceMs` become unhealthy (with an event). */
export async function watchHealth(
  kernel: Kernel,
  tables: CoordinatorTables,
  silenceMs: number,
): Promise<number> {
  const cutoff = kernel.clock.now() - silenceMs;
  const rows = await tables.reader
    .selectFrom('coordinator_services')
    .selectAll()
    .where('silent', '=', 0)
    .where('last_heartbeat_at', '<', cutoff)
    .limit(500)
    .execute();
  if (rows.length === 0) return 0;
  return tables.write(async (tx) => {
    let n = 0;
    for (const row of rows) {
      const r = await tx.db
        .updateTable('coordinator_services')
        .set({ health: 'unhealthy', silent: 1, updated_at: tx.now })
        .where('id', '=', row.id)
        .where('silent', '=', 0)
        .where('last_heartbeat_at', '<', cutoff)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) continue;
      await setHealth(tx, kernel, row, 'unhealthy', `no heartbeat for ${silenceMs} ms`);
      n++;
    }
    return n;
  });
}
