import type { SessionsTable } from '../store/schema.ts';
import type { UnitCondition } from '../store/unit-conditions.ts';
import type { WriteTx } from '../store/writer.ts';
import { forbidden } from '../vocab/errors.ts';
import type { Core } from './core.ts';
import type { NodeRole } from './node.ts';

/**
 * Which node runs a session's agent (docs/scaling.md): the session row names its owner and
 * the owner's epoch when it took it. A node claims a session as it starts its agent, in the
 * transaction that marks it running; a node that lost its lease (its epoch moved on, or the
 * session was handed to another node) can no longer write for that agent.
 */

const LIVE: ReadonlySet<string> = new Set(['pending', 'running', 'idle']);

/** Whether `row` is this node's to look after: its owner, or nobody's yet. */
export function ownedHere(node: NodeRole, row: { owner_node?: string | null }): boolean {
  return row.owner_node == null || row.owner_node === node.id;
}

/** Whether this node may start the session's agent: not while another node runs it. */
export function claimable(node: NodeRole, row: SessionsTable): boolean {
  return ownedHere(node, row) || !LIVE.has(row.status);
}

/**
 * Take the session for this node. Conditional on the row as read (owner and token
 * generation; a resume bumps the generation in the same transaction): of two nodes racing to
 * start one session, the second's update finds the row changed: false, it leaves it alone.
 */
export async function claim(tx: WriteTx, node: NodeRole, row: SessionsTable): Promise<boolean> {
  // Fenced (epoch 0 in a cluster): this node starts nothing until its lease is held again.
  if (node.clustered && node.epoch === 0) return false;
  let q = tx.db
    .updateTable('sessions')
    .set({ owner_node: node.id, owner_epoch: node.epoch })
    .where('id', '=', row.id)
    .where('token_gen', '=', row.token_gen ?? 0);
  q = row.owner_node == null ? q.where('owner_node', 'is', null) : q.where('owner_node', '=', row.owner_node);
  const r = await q.executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) return false;
  row.owner_node = node.id;
  row.owner_epoch = node.epoch;
  return true;
}

/**
 * Whether this node may still write for an agent it runs: it owns the session under its
 * current epoch. False once the session was taken over (this node's lease ran out).
 */
export function holdsLease(
  node: NodeRole,
  row: { owner_node?: string | null; owner_epoch?: number | null },
): boolean {
  if (!node.clustered) return true;
  return row.owner_node === node.id && Number(row.owner_epoch) === node.epoch;
}

/**
 * Whether a live agent can be asked to act (a SIGTERM): one runs here, or another node owns
 * the session while it runs — that node hands it the request from the log.
 */
export function agentLive(core: Core, row: SessionsTable): boolean {
  if (core.effects.hasAgent(row.id)) return true;
  return (
    core.node.clustered &&
    row.owner_node != null &&
    row.owner_node !== core.node.id &&
    (row.status === 'running' || row.status === 'idle')
  );
}

const OWNER_SQL = 'select owner_node from sessions where id = ?';
const OWNER_LOCKED_SQL = `${OWNER_SQL} for no key update`;

/**
 * The condition on every write an agent's call makes through this node, in a cluster
 * (unit-conditions.ts): its session is not another node's, and this node is not fenced. Read
 * in the unit's transaction with the row locked (PostgreSQL), so a takeover cannot commit
 * between the check and the write: a node that lost the session (paused, cut off) has its late
 * writes refused by the database. A session this node owned under an earlier epoch and has not
 * adopted again yet (a rejoin, a restart with resume off) is nobody else's: its writes pass.
 */
export function ownerCondition(node: NodeRole, sessionId: string): UnitCondition {
  return async (tx) => {
    const row = await tx.first<{ owner_node: string | null }>(
      tx.kind === 'postgres' ? OWNER_LOCKED_SQL : OWNER_SQL,
      [sessionId],
    );
    if (node.epoch === 0 || (row && !ownedHere(node, row)))
      throw forbidden(`session ${sessionId} is not run by this node (any more): its writes here are refused`);
  };
}
