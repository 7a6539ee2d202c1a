import type { Kernel } from '../../kernel/kernel.ts';
import { isOperatorId } from '../../vocab/principal.ts';
import type { TasksTable, Tx } from './schema.ts';
import { taskById } from './tasks.ts';

/**
 * Task-shaped signals: a task's outcome reaches the session that waits on it — its parent
 * task's session (the lead), else the session that created it — as one `[TASK]` line, once
 * per outcome, in the transaction that reached the outcome. The kernel's SIGCHLD for a task's
 * session is off (the plugin reports it, `reportedBy`), so a lead is woken once per outcome,
 * not once per state of its worker's session.
 */

/** What a `[TASK]` line says a task came to. */
export type TaskOutcome = 'complete' | 'failed' | 'cancelled' | 'waiting' | 'review';

/** The plugin's name on the sessions it spawns for tasks: it, not the kernel, tells their parents. */
export const REPORTER = 'orchestration';

/**
 * Tell the task's lead: `[TASK] <id> "<title>" <status>: <text>` on its stdin. Nobody is told
 * when the outcome is the lead's own act (it cancelled or completed the task itself), or when
 * the lead is gone or being stopped.
 */
export async function reportTask(
  tx: Tx,
  kernel: Kernel,
  t: TasksTable,
  status: TaskOutcome,
  text: string | null,
  actor: string,
): Promise<void> {
  const lead = await leadOf(tx, kernel, t);
  if (!lead || lead === actor) return;
  await kernel.signalIn(
    tx,
    { zone: t.zone, id: lead },
    'TASK',
    { task: t.id, title: t.title, status, text: text ?? '', session: t.session_id },
    actor,
  );
}

/**
 * The session that waits on a task: its parent task's live session (not the root's, which is
 * init), else the live session that created it. Not one already asked to stop.
 */
async function leadOf(tx: Tx, kernel: Kernel, t: TasksTable): Promise<string | null> {
  const live = async (id: string | null | undefined) => {
    if (!id) return null;
    const s = await kernel.sessionStateIn(tx, id);
    return s && s.status !== 'stopped' && s.termDeadline === null && s.depth > 0 ? s.id : null;
  };
  const parent = t.parent_id ? await taskById(tx.db, t.parent_id) : undefined;
  if (parent?.parent_id) {
    const found = await live(parent.session_id);
    if (found) return found;
  }
  if (isOperatorId(t.created_by) || t.created_by === 'kernel') return null;
  return live(t.created_by);
}
