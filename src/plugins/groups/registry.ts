import type { Kysely } from 'kysely';
import type { PluginTx } from '../../contract/plugin.ts';
import { invalid } from '../../vocab/errors.ts';
import { conflictError, notFoundGroup } from './errors.ts';
import { checkFolder, depthOf, parentOf, within } from './names.ts';
import type { GroupsDb, GroupsTable } from './schema.ts';
import { parseRule, TIER_LABELS, tierOf, toolsOf } from './tiers.ts';

/** A group as callers see it. */
export interface GroupView {
  folder: string;
  name: string;
  zone: string;
  parent: string | null;
  depth: number;
  tier: number;
  tierLabel: string;
  rules: string[];
  tools: string[];
  sessionId: string | null;
  hasAgent: boolean;
  createdAt: number;
}

export const rulesOf = (row: Pick<GroupsTable, 'rules'>): string[] => JSON.parse(row.rules) as string[];

export function viewOf(row: GroupsTable): GroupView {
  const depth = depthOf(row.folder);
  const rules = rulesOf(row);
  return {
    folder: row.folder,
    name: row.name,
    zone: row.zone,
    parent: parentOf(row.folder),
    depth,
    tier: tierOf(depth),
    tierLabel: TIER_LABELS[tierOf(depth)],
    rules,
    tools: toolsOf(depth, rules),
    sessionId: row.session_id,
    hasAgent: row.agent !== null,
    createdAt: Number(row.created_at),
  };
}

export async function findGroup(db: Kysely<GroupsDb>, folder: string): Promise<GroupsTable | undefined> {
  return db.selectFrom('groups').selectAll().where('folder', '=', folder).executeTakeFirst();
}

/** A group of `zone`, or not_found (a group of another zone is not found either). */
export async function groupIn(db: Kysely<GroupsDb>, zone: string, folder: string): Promise<GroupsTable> {
  const row = await findGroup(db, folder);
  if (!row || row.zone !== zone) throw notFoundGroup(folder);
  return row;
}

/** The groups of a zone, under `root` when given (itself included), in folder order. */
export async function listGroups(
  db: Kysely<GroupsDb>,
  zone: string,
  root: string | null,
): Promise<GroupsTable[]> {
  let q = db.selectFrom('groups').selectAll().where('zone', '=', zone);
  if (root !== null) q = q.where((eb) => eb.or([eb('folder', '=', root), eb('folder', 'like', `${root}/%`)]));
  const rows = await q.orderBy('folder').execute();
  // `like` treats _ as a wildcard: keep only the real subtree.
  return root === null ? rows : rows.filter((r) => within(r.folder, root));
}

/** The spawn request of a group's agent: its own, else its nearest ancestor's. */
export async function agentOf(
  db: Kysely<GroupsDb>,
  row: GroupsTable,
): Promise<Record<string, unknown> | null> {
  for (let folder: string | null = row.folder; folder !== null; folder = parentOf(folder)) {
    const g = folder === row.folder ? row : await findGroup(db, folder);
    if (g?.agent) return JSON.parse(g.agent) as Record<string, unknown>;
  }
  return null;
}

export interface NewGroup {
  folder: string;
  zone: string;
  name?: string | undefined;
  agent?: Record<string, unknown> | undefined;
  rules?: string[] | undefined;
}

/** Register a group under an existing parent (a root group has none), in the caller's transaction. */
export async function insertGroup(tx: PluginTx<GroupsDb>, g: NewGroup, by: string): Promise<GroupsTable> {
  checkFolder(g.folder);
  for (const r of g.rules ?? []) parseRule(r);
  const db = tx.db;
  if (await findGroup(tx.db, g.folder)) throw conflictError(`group ${g.folder} already exists`);
  const parent = parentOf(g.folder);
  if (parent !== null) {
    const p = await findGroup(tx.db, parent);
    if (!p || p.zone !== g.zone)
      throw invalid(`group ${g.folder}: its parent ${parent} does not exist`, { field: 'folder' });
  }
  const row: GroupsTable = {
    folder: g.folder,
    zone: g.zone,
    name: g.name ?? g.folder,
    agent: g.agent ? JSON.stringify(g.agent) : null,
    rules: JSON.stringify(g.rules ?? []),
    session_id: null,
    last_chat: null,
    created_by: by,
    created_at: tx.now,
    updated_at: tx.now,
  };
  await db.insertInto('groups').values(row).execute();
  tx.append({
    zone: g.zone,
    type: 'group.registered',
    actor: by,
    payload: {
      folder: g.folder,
      tier: tierOf(depthOf(g.folder)),
      rules: g.rules ?? [],
      agent: row.agent !== null,
    },
  });
  return row;
}
