import type { SessionStatus, SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import type { Core } from './core.ts';
import { endSession } from './lifecycle.ts';
import { KERNEL_ACTOR } from './principal.ts';
import { notifyParent } from './signals.ts';

/** Move a live session between pending, running, idle and suspended (stopping is endSession's). */
export async function setStatus(
  tx: WriteTx,
  core: Core,
  row: SessionsTable,
  to: Exclude<SessionStatus, 'stopped'>,
  extra: { reason?: string; actor?: string } = {},
): Promise<SessionsTable> {
  if (row.status === 'stopped') return row;
  if (row.status === to) return row;
  const patch: Partial<SessionsTable> = { status: to, updated_at: tx.now };
  if (to === 'suspended') patch.suspend_reason = extra.reason ?? 'suspended';
  else patch.suspend_reason = null;
  if (to === 'idle') patch.turns = row.turns + 1;
  await tx.db.updateTable('sessions').set(patch).where('id', '=', row.id).execute();
  tx.append({
    zone: row.zone,
    type: 'session.status',
    actor: extra.actor ?? KERNEL_ACTOR,
    session_id: row.id,
    payload: { from: row.status, to, ...(extra.reason ? { reason: extra.reason } : {}) },
  });
  const next = { ...row, ...patch };
  if (to === 'idle') {
    await notifyParent(tx, next);
    if (next.max_turns !== null && next.turns >= next.max_turns) {
      await endSession(tx, core, next.id, 'budget_exceeded', KERNEL_ACTOR, { maxTurns: next.max_turns });
    }
  }
  return next;
}
