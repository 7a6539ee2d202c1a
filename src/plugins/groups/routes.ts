import type { Kysely } from 'kysely';
import type { PluginTx } from '../../contract/plugin.ts';
import type { IdGenerator } from '../../util/ids.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { type Actor, mustReach, reaches } from './actor.ts';
import { type CompiledRoute, formatMatch, parseMatch } from './match.ts';
import { groupIn } from './registry.ts';
import type { GroupRoutesTable, GroupsDb } from './schema.ts';

export interface RouteView {
  id: string;
  seq: number;
  match: string;
  target: string;
  createdBy: string;
  createdAt: number;
}

export interface RouteSpec {
  seq: number;
  match: string;
  target: string;
}

export const routeView = (r: GroupRoutesTable): RouteView => ({
  id: r.id,
  seq: Number(r.seq),
  match: r.match,
  target: r.target,
  createdBy: r.created_by,
  createdAt: Number(r.created_at),
});

/** A zone's routes in evaluation order. */
export const zoneRoutes = (db: Kysely<GroupsDb>, zone: string): Promise<GroupRoutesTable[]> =>
  db.selectFrom('groups_routes').selectAll().where('zone', '=', zone).orderBy('seq').orderBy('id').execute();

/** The routes an actor sees: an operator or a root group all of its zone's; others those targeting their subtree. */
export async function visibleRoutes(db: Kysely<GroupsDb>, a: Actor): Promise<GroupRoutesTable[]> {
  const all = await zoneRoutes(db, a.zone);
  return a.tier === 0 && a.folder !== null ? all : all.filter((r) => reaches(a, r.target));
}

/**
 * A group holds at most `max` routes targeting its subtree (the attack: a tier-1 socket added
 * 1,000 routes, and every inbound message pays for each). Operators are not capped.
 */
function capRoutes(a: Actor, wanted: number, max: number): void {
  if (wanted <= max) return;
  throw new WarrenError(
    'limit_exceeded',
    `group ${a.folder} may hold at most ${max} routes (plugins.groups.maxRoutesPerGroup); it would hold ${wanted}`,
    { limit: 'maxRoutesPerGroup', max },
  );
}

/** Parse and check one route for `a`; the canonical row to store. */
async function checked(
  db: Kysely<GroupsDb>,
  a: Actor,
  spec: RouteSpec,
): Promise<Omit<GroupRoutesTable, 'id'>> {
  const match = formatMatch(parseMatch(spec.match));
  mustReach(a, spec.target, 'route target');
  await groupIn(db, a.zone, spec.target);
  return { zone: a.zone, seq: spec.seq, match, target: spec.target, created_by: a.id, created_at: 0 };
}

export async function addRoute(
  tx: PluginTx<GroupsDb>,
  ids: IdGenerator,
  a: Actor,
  spec: RouteSpec,
  max = Number.POSITIVE_INFINITY,
): Promise<GroupRoutesTable> {
  const row = { ...(await checked(tx.db, a, spec)), id: ids.id('route'), created_at: tx.now };
  if (a.folder !== null) capRoutes(a, (await visibleRoutes(tx.db, a)).length + 1, max);
  await tx.db.insertInto('groups_routes').values(row).execute();
  tx.append({ zone: a.zone, type: 'group.route_added', actor: a.id, payload: { route: routeView(row) } });
  return row;
}

/** Replace every route targeting the actor's subtree (an operator without a group: the zone's) with `specs`. */
export async function setRoutes(
  tx: PluginTx<GroupsDb>,
  ids: IdGenerator,
  a: Actor,
  specs: readonly RouteSpec[],
  max = Number.POSITIVE_INFINITY,
): Promise<GroupRoutesTable[]> {
  if (a.folder !== null) capRoutes(a, specs.length, max);
  const rows: GroupRoutesTable[] = [];
  for (const s of specs)
    rows.push({ ...(await checked(tx.db, a, s)), id: ids.id('route'), created_at: tx.now });
  const old = (await zoneRoutes(tx.db, a.zone)).filter((r) => reaches(a, r.target));
  const db = tx.db;
  for (let i = 0; i < old.length; i += 500) {
    await db
      .deleteFrom('groups_routes')
      .where(
        'id',
        'in',
        old.slice(i, i + 500).map((r) => r.id),
      )
      .execute();
  }
  for (let i = 0; i < rows.length; i += 200)
    await db
      .insertInto('groups_routes')
      .values(rows.slice(i, i + 200))
      .execute();
  tx.append({
    zone: a.zone,
    type: 'group.routes_set',
    actor: a.id,
    payload: { scope: a.folder, removed: old.length, routes: rows.map(routeView) },
  });
  return rows;
}

export async function deleteRoute(tx: PluginTx<GroupsDb>, a: Actor, id: string): Promise<GroupRoutesTable> {
  const row = await tx.db.selectFrom('groups_routes').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || row.zone !== a.zone || !reaches(a, row.target)) {
    throw new WarrenError('not_found', `no route ${id.slice(0, 100)} you can see`, {
      what: 'route',
      id: id.slice(0, 100),
    });
  }
  await tx.db.deleteFrom('groups_routes').where('id', '=', id).execute();
  tx.append({ zone: a.zone, type: 'group.route_deleted', actor: a.id, payload: { route: routeView(row) } });
  return row;
}

/** A stored route as inbound matching uses it. */
export const compileRoute = (r: GroupRoutesTable): CompiledRoute => ({
  id: r.id,
  seq: Number(r.seq),
  target: r.target,
  match: parseMatch(r.match),
});
