import { sql } from 'kysely';
import type { SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { INIT_SESSION, KERNEL_ACTOR } from '../vocab/principal.ts';
import { NO_BUDGET } from './budget.ts';
import type { KernelLimits } from './config.ts';

/** Zones: tenant namespaces, each with its own root session (`init`) and limits. */

export const initIdOf = (zone: string) => (zone === 'default' ? INIT_SESSION : `${INIT_SESSION}.${zone}`);
export const isInit = (id: string) => id === INIT_SESSION || id.startsWith(`${INIT_SESSION}.`);

/** Make sure a zone and its root session exist. */
export async function ensureZone(tx: WriteTx, zone: string): Promise<void> {
  const exists = await tx.db.selectFrom('zones').select('id').where('id', '=', zone).executeTakeFirst();
  if (exists) return;
  await tx.db
    .insertInto('zones')
    .values({ id: zone, created_at: tx.now, max_depth: null, max_children: null, max_sessions: null })
    .execute();
  const init: SessionsTable = {
    id: initIdOf(zone),
    zone,
    parent_id: null,
    depth: 0,
    status: 'running',
    end_reason: null,
    runtime: 'init',
    runner: 'kernel',
    title: 'init',
    spec: '{}',
    runtime_state: null,
    parent_close: 'reparent',
    token_hash: null,
    idempotency_key: null,
    last_message: null,
    suspend_reason: null,
    term_deadline: null,
    expires_at: null,
    max_turns: null,
    turns: 0,
    usage: '{}',
    created_at: tx.now,
    updated_at: tx.now,
    ended_at: null,
    tools: null,
    grants: null,
    end_detail: null,
    activity: null,
    ...NO_BUDGET,
  };
  await tx.db.insertInto('sessions').values(init).execute();
  tx.append({ zone, type: 'zone.created', actor: KERNEL_ACTOR, session_id: init.id, payload: { zone } });
}

/** Serialise spawns in a zone across nodes; SQLite's single writer already does. */
export async function lockZone(tx: WriteTx, zone: string): Promise<void> {
  if (tx.kind === 'postgres') await sql`select id from zones where id = ${zone} for update`.execute(tx.db);
}

/** The limits in force in a zone: its own where set, else the kernel's. */
export async function zoneLimits(tx: WriteTx, zone: string, defaults: KernelLimits): Promise<KernelLimits> {
  const row = await tx.db.selectFrom('zones').selectAll().where('id', '=', zone).executeTakeFirstOrThrow();
  return {
    maxDepth: row.max_depth ?? defaults.maxDepth,
    maxChildren: row.max_children ?? defaults.maxChildren,
    maxSessionsPerZone: row.max_sessions ?? defaults.maxSessionsPerZone,
  };
}

export interface ZoneLimitsPatch {
  maxDepth?: number | null;
  maxChildren?: number | null;
  maxSessionsPerZone?: number | null;
}

/** Set (or, with null, clear back to the kernel's) a zone's own limits; returns those in force. */
export async function setZoneLimits(
  tx: WriteTx,
  zone: string,
  patch: ZoneLimitsPatch,
  defaults: KernelLimits,
  actor: string,
): Promise<KernelLimits> {
  await ensureZone(tx, zone);
  const set: { max_depth?: number | null; max_children?: number | null; max_sessions?: number | null } = {};
  if (patch.maxDepth !== undefined) set.max_depth = patch.maxDepth;
  if (patch.maxChildren !== undefined) set.max_children = patch.maxChildren;
  if (patch.maxSessionsPerZone !== undefined) set.max_sessions = patch.maxSessionsPerZone;
  if (Object.keys(set).length > 0) {
    await tx.db.updateTable('zones').set(set).where('id', '=', zone).execute();
    tx.append({ zone, type: 'zone.limits', actor, payload: { ...patch } });
  }
  return zoneLimits(tx, zone, defaults);
}
