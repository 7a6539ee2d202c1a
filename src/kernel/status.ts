import type { SessionStatus, SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { KERNEL_ACTOR } from '../vocab/principal.ts';
import type { Core } from './core.ts';
import { endSession } from './lifecycle.ts';
import { sessionIn } from './lookup.ts';
import { notifyParent } from './signals.ts';
import { sumUp } from './usage.ts';

const ONE_TURN = { inputTokens: 0, outputTokens: 0, costUsd: 0, turns: 1 };

/**
 * Every turn moves its session twice (running, idle): fixed texts, prepared once, not the
 * query builder. A turn's end counts one more turn, on the row and in its subtree's totals.
 */
const STATUS_SQL = 'update sessions set status = ?, updated_at = ?, suspend_reason = ? where id = ?';
const TURN_ENDED_SQL =
  'update sessions set status = ?, updated_at = ?, suspend_reason = ?, turns = ?, subtree_turns = subtree_turns + 1 where id = ?';

/**
 * Move a live session between pending, running, idle and suspended (stopping is endSession's).
 * Returns the row as it now stands.
 */
export async function setStatus(
  tx: WriteTx,
  core: Core,
  row: SessionsTable,
  to: Exclude<SessionStatus, 'stopped'>,
  /** `quiet`: the parent is not told (a resumed agent back where it stood: nothing changed). */
  extra: { reason?: string; actor?: string; quiet?: boolean } = {},
): Promise<SessionsTable> {
  if (row.status === 'stopped') return row;
  if (row.status === to) return row;
  const patch: Partial<SessionsTable> = {
    status: to,
    updated_at: tx.now,
    suspend_reason: to === 'suspended' ? (extra.reason ?? 'suspended') : null,
  };
  if (to === 'idle') patch.turns = row.turns + 1;
  // A turn counts in its subtree's totals too: its own row's in this statement, the rest in sumUp.
  await tx.run(
    to === 'idle' ? TURN_ENDED_SQL : STATUS_SQL,
    to === 'idle'
      ? [to, tx.now, patch.suspend_reason, patch.turns, row.id]
      : [to, tx.now, patch.suspend_reason, row.id],
  );
  tx.append({
    zone: row.zone,
    type: 'session.status',
    actor: extra.actor ?? KERNEL_ACTOR,
    session_id: row.id,
    payload: { from: row.status, to, ...(extra.reason ? { reason: extra.reason } : {}) },
  });
  const next: SessionsTable = {
    ...row,
    ...patch,
    ...(to === 'idle' ? { subtree_turns: row.subtree_turns + ONE_TURN.turns } : {}),
  };
  if (to === 'idle') {
    await sumUp(tx, core, next, ONE_TURN);
    if (!extra.quiet) await notifyParent(tx, next);
    if (next.max_turns !== null && next.turns >= next.max_turns) {
      await endSession(tx, core, next.id, 'budget_exceeded', KERNEL_ACTOR, { maxTurns: next.max_turns });
      return (await sessionIn(tx, row.id)) ?? next;
    }
    // A budget that covers it may have acted on it (a SIGTERM, an end): read what it left.
    if (next.budget_scope !== null) return (await sessionIn(tx, row.id)) ?? next;
  }
  return next;
}
