import type { Kernel } from '../../kernel/kernel.ts';
import { keysetPage } from '../../store/paging.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { agentRow } from './agents.ts';
import { TOPICS } from './config.ts';
import { enqueue } from './outbox.ts';
import { iso, rowInZone } from './rows.ts';
import type { CoordDelegationsTable, CoordinatorTables, CoordinatorTx } from './schema.ts';

/** What an edge allows: absent lists allow everything; an expiry ends it. */
export interface Constraints {
  resources?: string[] | undefined;
  scopes?: string[] | undefined;
  expires_at?: string | undefined;
}

type EdgeStatus = 'active' | 'expired' | 'revoked';
/** An expired edge stops applying at its expiry, whether or not a sweep has run. */
const edgeStatus = (r: CoordDelegationsTable, now: number): EdgeStatus => {
  if (r.revoked_at !== null) return 'revoked';
  return r.expires_at !== null && r.expires_at <= now ? 'expired' : 'active';
};

export const edgeView = (r: CoordDelegationsTable, now: number) => ({
  id: r.id,
  zone_id: r.zone,
  source_agent_id: r.source_agent_id,
  target_agent_id: r.target_agent_id,
  parent_edge_id: r.parent_edge_id,
  constraints: JSON.parse(r.constraints) as Constraints,
  status: edgeStatus(r, now),
  expires_at: iso(r.expires_at),
  revoked_at: iso(r.revoked_at),
  created_at: iso(r.created_at) as string,
});

const within = (inner: string[] | undefined, outer: string[] | undefined) =>
  outer === undefined || inner?.every((x) => outer.includes(x));

/** Whether `c` (with expiry `exp`) is no wider than the edge `e`. */
function narrows(c: Constraints, exp: number | null, e: CoordDelegationsTable): boolean {
  const ec = JSON.parse(e.constraints) as Constraints;
  if (!within(c.resources, ec.resources) || !within(c.scopes, ec.scopes)) return false;
  return e.expires_at === null || (exp !== null && exp <= e.expires_at);
}

/**
 * Create an edge. A source that holds delegated authority (live edges into it) may only
 * pass on a part of one of them: the new edge must fit inside one (resources and scopes
 * subsets, expiry no later), which becomes its parent — revoking the parent revokes it.
 * A source with no incoming edge is a root of authority. Written with a policy event.
 */
export async function createDelegation(
  kernel: Kernel,
  tables: CoordinatorTables,
  i: {
    zoneId: string;
    source_agent_id: string;
    target_agent_id: string;
    constraints?: Constraints | undefined;
  },
) {
  return tables.write(async (tx) => {
    const zone = i.zoneId;
    for (const id of [i.source_agent_id, i.target_agent_id]) {
      const a = await agentRow(tx.db, zone, id);
      if (a.status === 'terminated') throw new WarrenError('conflict', `agent ${id} is terminated`, { id });
    }
    if (i.source_agent_id === i.target_agent_id)
      throw new WarrenError('invalid_input', 'an agent cannot delegate to itself');
    const c = i.constraints ?? {};
    const exp = c.expires_at !== undefined ? Date.parse(c.expires_at) : null;
    if (exp !== null && (Number.isNaN(exp) || exp <= tx.now)) {
      throw new WarrenError('invalid_input', 'constraints.expires_at must be a time in the future');
    }
    const held = await liveEdgesInto(tx, zone, i.source_agent_id);
    let parent: CoordDelegationsTable | null = null;
    // An agent whose delegated authority expired or was revoked has none left to pass on.
    const everHeld = await tx.db
      .selectFrom('coordinator_delegations')
      .select('id')
      .where('zone', '=', zone)
      .where('target_agent_id', '=', i.source_agent_id)
      .limit(1)
      .executeTakeFirst();
    if (everHeld && held.length === 0) {
      throw new WarrenError(
        'widens_grant',
        `agent ${i.source_agent_id} held delegated authority that has expired or been revoked; it has none to delegate`,
      );
    }
    if (held.length > 0) {
      parent = held.find((e) => narrows(c, exp, e)) ?? null;
      if (!parent) {
        throw new WarrenError(
          'widens_grant',
          `agent ${i.source_agent_id} holds delegated authority and can only narrow it: these constraints fit none of its ${held.length} incoming edge(s)`,
          { held: held.map((e) => e.id) },
        );
      }
    }
    const row: CoordDelegationsTable = {
      id: kernel.ids.id('edge'),
      zone,
      source_agent_id: i.source_agent_id,
      target_agent_id: i.target_agent_id,
      parent_edge_id: parent?.id ?? null,
      constraints: JSON.stringify(c),
      expires_at: exp,
      revoked_at: null,
      created_at: tx.now,
    };
    await tx.db.insertInto('coordinator_delegations').values(row).execute();
    await enqueue(tx, kernel.ids, [
      {
        zone,
        topic: TOPICS.policyInvalidate,
        key: row.target_agent_id,
        type: 'delegation.created',
        payload: {
          edge_id: row.id,
          source_agent_id: row.source_agent_id,
          target_agent_id: row.target_agent_id,
        },
      },
    ]);
    return edgeView(row, tx.now);
  });
}

async function liveEdgesInto(tx: CoordinatorTx, zone: string, agent: string) {
  return tx.db
    .selectFrom('coordinator_delegations')
    .selectAll()
    .where('zone', '=', zone)
    .where('target_agent_id', '=', agent)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', tx.now)]))
    .orderBy('created_at')
    .limit(1000)
    .execute();
}

/** Revoke an edge and every edge derived from it, one policy event per revoked edge. */
export async function revokeDelegation(kernel: Kernel, tables: CoordinatorTables, zone: string, id: string) {
  return tables.write(async (tx) => {
    const db = tx.db;
    const root = await rowInZone(tx.db, 'delegation', zone, id);
    const revoked: CoordDelegationsTable[] = [];
    const seen = new Set<string>();
    for (let frontier = [root]; frontier.length > 0; ) {
      const next: CoordDelegationsTable[] = [];
      for (const e of frontier) {
        if (seen.has(e.id)) continue;
        seen.add(e.id);
        if (e.revoked_at === null) revoked.push(e);
      }
      const ids = frontier.map((e) => e.id);
      for (const child of await db
        .selectFrom('coordinator_delegations')
        .selectAll()
        .where('parent_edge_id', 'in', ids)
        .execute()) {
        if (!seen.has(child.id)) next.push(child);
      }
      frontier = next;
    }
    if (revoked.length > 0) {
      await db
        .updateTable('coordinator_delegations')
        .set({ revoked_at: tx.now })
        .where(
          'id',
          'in',
          revoked.map((e) => e.id),
        )
        .execute();
    }
    await enqueue(
      tx,
      kernel.ids,
      revoked.map((e) => ({
        zone,
        topic: TOPICS.policyInvalidate,
        key: e.target_agent_id,
        type: 'delegation.revoked',
        payload: { edge_id: e.id, source_agent_id: e.source_agent_id, target_agent_id: e.target_agent_id },
      })),
    );
    return { revoked: revoked.map((e) => e.id) };
  });
}

export async function listDelegations(
  kernel: Kernel,
  tables: CoordinatorTables,
  zone: string,
  q: { agent_id?: string | undefined; limit?: number | undefined; cursor?: string | undefined },
) {
  const limit = q.limit ?? 100;
  let sel = tables.reader.selectFrom('coordinator_delegations').selectAll().where('zone', '=', zone);
  if (q.agent_id) {
    const a = q.agent_id;
    sel = sel.where((eb) => eb.or([eb('source_agent_id', '=', a), eb('target_agent_id', '=', a)]));
  }
  if (q.cursor) sel = sel.where('id', '>', q.cursor);
  const { items, next } = await keysetPage(limit, (n) => sel.orderBy('id').limit(n).execute());
  const now = kernel.clock.now();
  return { delegations: items.map((r) => edgeView(r, now)), next };
}

/** Retention: edges older than the window are deleted. */
export async function cleanDelegations(
  kernel: Kernel,
  tables: CoordinatorTables,
  days: number,
): Promise<number> {
  const cutoff = kernel.clock.now() - days * 86_400_000;
  return tables.write(async (tx) => {
    const r = await tx.db
      .deleteFrom('coordinator_delegations')
      .where('created_at', '<', cutoff)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  });
}
