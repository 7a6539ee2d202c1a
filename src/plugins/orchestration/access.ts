import { forbidden } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import type { Db, TasksTable } from './schema.ts';
import { rootIdOf, taskById } from './tasks.ts';

/**
 * Who may act on a task. Operators: every task of their zone. A session: its subtree —
 * its own task (the one it is the latest session of) and what lies below it, and the
 * tasks it created at the top of the tree (as a session that is no task's) and below.
 */

/** How far up a parent chain is walked (a chain this long is a tree nobody built by hand). */
const MAX_CHAIN = 10_000;

export async function mayActOn(db: Db, p: Principal, task: TasksTable): Promise<boolean> {
  if (p.kind === 'operator') return task.zone === p.zone;
  if (task.zone !== p.zone) return false;
  const root = rootIdOf(p.zone);
  let cur: TasksTable | undefined = task;
  for (let i = 0; cur && i < MAX_CHAIN; i++) {
    if (cur.id === root) return false;
    if (cur.session_id === p.sessionId) return true;
    if (cur.parent_id === root && cur.created_by === p.sessionId) return true;
    cur = cur.parent_id ? await taskById(db, cur.parent_id) : undefined;
  }
  return false;
}

export async function requireActOn(db: Db, p: Principal, task: TasksTable, what = 'act on'): Promise<void> {
  if (!(await mayActOn(db, p, task))) {
    throw forbidden(
      `${task.id} is not in your task subtree: you may ${what} only your own task and those below it`,
    );
  }
}

/** The task a session is the latest session of, if any: a session's new tasks go under it. */
export async function ownTask(db: Db, sessionId: string): Promise<TasksTable | undefined> {
  return db
    .selectFrom('orchestration_tasks')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('id')
    .executeTakeFirst();
}

/** The tops of a session's subtree: its own task, and tasks it made under the root. */
export async function subtreeRoots(db: Db, p: Extract<Principal, { kind: 'session' }>): Promise<string[]> {
  const own = await ownTask(db, p.sessionId);
  const made = await db
    .selectFrom('orchestration_tasks')
    .select('id')
    .where('parent_id', '=', rootIdOf(p.zone))
    .where('created_by', '=', p.sessionId)
    .execute();
  return [...(own && own.zone === p.zone ? [own.id] : []), ...made.map((r) => r.id)];
}
