import type { Kernel } from '../../kernel/kernel.ts';
import { TASK_DONE, type TasksTable, type Tx } from './schema.ts';
import { isDone, taskById } from './tasks.ts';

/**
 * Orphan-reparent over the task tree: the open children of a task that completed or failed
 * move to its nearest open ancestor (the root at worst, which never ends), and that task's
 * live session is told with `[ADOPTED]`.
 */
export async function adoptChildren(
  tx: Tx,
  kernel: Kernel,
  parent: TasksTable,
  actor: string,
): Promise<string[]> {
  const kids = await tx.db
    .selectFrom('orchestration_tasks')
    .selectAll()
    .where('parent_id', '=', parent.id)
    .where('status', 'not in', TASK_DONE)
    .execute();
  if (kids.length === 0) return [];
  const to = await adopterOf(tx, parent);
  for (const kid of kids) await adopt(tx, kernel, kid, parent, to, actor);
  return kids.map((k) => k.id);
}

/** The nearest ancestor that is not done. */
async function adopterOf(tx: Tx, dead: TasksTable): Promise<TasksTable> {
  let cur = dead;
  for (;;) {
    const up = cur.parent_id ? await taskById(tx.db, cur.parent_id) : undefined;
    // A task always has a parent up to the root, and the root never ends.
    if (!up?.parent_id || !isDone(up.status)) return up ?? cur;
    cur = up;
  }
}

async function adopt(
  tx: Tx,
  kernel: Kernel,
  kid: TasksTable,
  from: TasksTable,
  to: TasksTable,
  actor: string,
): Promise<void> {
  await tx.db
    .updateTable('orchestration_tasks')
    .set({ parent_id: to.id, updated_at: tx.now })
    .where('id', '=', kid.id)
    .execute();
  tx.append({
    zone: kid.zone,
    type: 'task.adopted',
    actor,
    session_id: kid.session_id,
    payload: { task: kid.id, from: from.id, to: to.id, reason: `parent ${from.status}` },
  });
  // The root's session is init: it has no stdin and nobody reads its signals.
  if (!to.parent_id || !to.session_id) return;
  const s = await kernel.sessionStateIn(tx, to.session_id);
  if (!s || s.status === 'stopped') return;
  await kernel.signalIn(
    tx,
    { zone: kid.zone, id: s.id },
    'ADOPTED',
    {
      child: kid.id,
      title: kid.title,
      from: from.id,
      reason: from.status,
      task: kid.id,
      session: kid.session_id,
    },
    actor,
  );
}
