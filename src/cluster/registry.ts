import type { Store } from '../store/store.ts';
import type { LeaseClient } from './lease-client.ts';

/**
 * The `nodes` table: who is on the database and until when. Every write here is conditional
 * on the epoch, so a node whose lease was declared lost (and its sessions handed on) cannot
 * renew it: it learns it was fenced and starts over as a new epoch.
 */

export interface NodeEntry {
  id: string;
  epoch: number;
}

/** Join (or rejoin) as a new epoch: the fencing token of everything this node owns from now on. */
export async function join(
  store: Store,
  node: { id: string; address: string | null; runtimes: readonly string[] },
  leaseMs: number,
): Promise<number> {
  // A fenced node's rejoin is the one write it makes while its lease has lapsed.
  return store.writer.write(
    async (tx) => {
      const prev = await tx.db
        .selectFrom('nodes')
        .select('epoch')
        .where('id', '=', node.id)
        .executeTakeFirst();
      const epoch = Number(prev?.epoch ?? 0) + 1;
      const row = {
        address: node.address,
        runtimes: JSON.stringify(node.runtimes),
        epoch,
        state: 'live',
        heartbeat_at: tx.now,
        lease_until: tx.now + leaseMs,
      };
      if (prev) await tx.db.updateTable('nodes').set(row).where('id', '=', node.id).execute();
      else
        await tx.db
          .insertInto('nodes')
          .values({ id: node.id, joined_at: tx.now, ...row })
          .execute();
      tx.append({
        zone: 'default',
        type: 'node.joined',
        actor: 'kernel',
        payload: { node: node.id, epoch, address: node.address, runtimes: node.runtimes },
      });
      return epoch;
    },
    { whileFenced: true },
  );
}

/** Renew the lease; false when it was lost meanwhile (another epoch, or declared lost). */
export async function renew(
  store: Store,
  me: NodeEntry,
  now: number,
  leaseMs: number,
  address: string | null,
): Promise<boolean> {
  // Outside the writer: a lease must not wait behind a long batch of other work.
  const r = await store.reader
    .updateTable('nodes')
    .set({ heartbeat_at: now, lease_until: now + leaseMs, address })
    .where('id', '=', me.id)
    .where('epoch', '=', me.epoch)
    .where('state', '=', 'live')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Renew the lease on the lease's own connection, within `deadlineMs` (lease-client.ts); false
 * when it was lost meanwhile (another epoch, or declared lost). The lease never moves back: a
 * renewal abandoned at its deadline may still be applied after a later one, and must not
 * shorten the lease that one set.
 */
export async function renewWithin(
  client: LeaseClient,
  me: NodeEntry,
  now: number,
  leaseMs: number,
  address: string | null,
  deadlineMs: number,
  /** What it can run now: its runtimes and its connected runners' environments (placement). */
  runtimes: readonly string[],
): Promise<boolean> {
  const r = await client.query(
    `update nodes set heartbeat_at = greatest(heartbeat_at, $1), lease_until = greatest(lease_until, $2),
       address = $3, runtimes = $6
     where id = $4 and epoch = $5 and state = 'live'`,
    [now, now + leaseMs, address, me.id, me.epoch, JSON.stringify(runtimes)],
    deadlineMs,
  );
  return r.rowCount === 1;
}

/**
 * The epoch of a lease another run of this node's id holds at `now`, read on the lease's own
 * connection within `deadlineMs` when a renewal found ours gone; null when none does (the
 * lease was declared lost, or lapsed).
 */
export async function otherHolderWithin(
  client: LeaseClient,
  me: NodeEntry,
  now: number,
  deadlineMs: number,
): Promise<number | null> {
  const r = await client.query<{ epoch: string | number }>(
    `select epoch from nodes where id = $1 and epoch > $2 and state = 'live' and lease_until >= $3`,
    [me.id, me.epoch, now],
    deadlineMs,
  );
  return r.rows[0] ? Number(r.rows[0].epoch) : null;
}

/** Leave cleanly: the lease ends now, so the other nodes take this node's sessions at once. */
export async function leave(store: Store, me: NodeEntry): Promise<void> {
  await store.reader
    .updateTable('nodes')
    .set({ lease_until: 0 })
    .where('id', '=', me.id)
    .where('epoch', '=', me.epoch)
    .execute();
}

export interface LiveNode {
  id: string;
  epoch: number;
  /** Its runtimes, and the environments of the runners connected to it (`runner:<name>`). */
  runtimes: string[];
  address: string | null;
}

/** Nodes holding a lease at `now`. */
export async function liveNodes(store: Store, now: number): Promise<LiveNode[]> {
  const rows = await store.reader
    .selectFrom('nodes')
    .selectAll()
    .where('state', '=', 'live')
    .where('lease_until', '>=', now)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    epoch: Number(r.epoch),
    runtimes: JSON.parse(r.runtimes) as string[],
    address: r.address,
  }));
}
