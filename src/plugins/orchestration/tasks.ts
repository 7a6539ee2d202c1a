import { initIdOf } from '../../kernel/zones.ts';
import { parseJson } from '../../util/json.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { type Db, TASK_DONE, type TaskStatus, type TasksTable, type Tx } from './schema.ts';

/** Task rows: the zone's root task, lookups, and the one way a task changes status. */

/**
 * A zone's root task: the task tree's init. `root` in the default zone, `root.<zone>`
 * elsewhere (ids are unique across zones, like `init`); `root` given by a caller always
 * means its own zone's.
 */
export const rootIdOf = (zone: string) => (zone === 'default' ? 'root' : `root.${zone}`);
export const isRootId = (id: string) => id === 'root' || id.startsWith('root.');
/** A caller's task reference: `root` is its zone's root task. */
export const taskRef = (zone: string, id: string) => (id === 'root' ? rootIdOf(zone) : id);

export const isDone = (s: TaskStatus) => TASK_DONE.includes(s);

/** Make sure a zone has its root task (made the first time the zone gets a task). */
export async function ensureRoot(tx: Tx, zone: string): Promise<void> {
  const id = rootIdOf(zone);
  const found = await tx.db
    .selectFrom('orchestration_tasks')
    .select('id')
    .where('id', '=', id)
    .executeTakeFirst();
  if (found) return;
  await tx.db
    .insertInto('orchestration_tasks')
    .values({
      id,
      zone,
      parent_id: null,
      title: 'root',
      prompt: '',
      persona_id: null,
      environment: 'local',
      spawn: '{}',
      budget: null,
      review: 0,
      on_failure: 'fail',
      held: 0,
      // Its session is the zone's init: it runs as long as the zone does, and never completes.
      status: 'running',
      session_id: initIdOf(zone),
      result: null,
      reason: null,
      attempts: 0,
      created_by: 'kernel',
      created_at: tx.now,
      updated_at: tx.now,
      ended_at: null,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export async function taskById(db: Db, id: string): Promise<TasksTable | undefined> {
  return db.selectFrom('orchestration_tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A task of `zone`, or `not_found` (another zone's task does not exist for this caller). */
export async function taskInZone(db: Db, zone: string, ref: string): Promise<TasksTable> {
  const id = taskRef(zone, ref);
  const row = await taskById(db, id);
  if (!row || row.zone !== zone) {
    throw new WarrenError('not_found', `task ${JSON.stringify(ref)} does not exist`, {
      what: 'task',
      id: ref,
    });
  }
  return row;
}

export async function depsOf(db: Db, id: string): Promise<string[]> {
  const rows = await db
    .selectFrom('orchestration_task_deps')
    .select('depends_on')
    .where('task_id', '=', id)
    .orderBy('depends_on')
    .execute();
  return rows.map((r) => r.depends_on);
}

export async function childIds(db: Db, id: string): Promise<string[]> {
  const rows = await db
    .selectFrom('orchestration_tasks')
    .select('id')
    .where('parent_id', '=', id)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Children that are not done: a parent with these is still waiting on its subtree. */
export async function openChildren(db: Db, id: string): Promise<number> {
  const row = await db
    .selectFrom('orchestration_tasks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('parent_id', '=', id)
    .where('status', 'not in', TASK_DONE)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export interface Change {
  to: TaskStatus;
  reason?: string | null;
  result?: string | null;
  actor: string;
  /** Other columns that change with it (session, attempts, held …). */
  patch?: Partial<TasksTable>;
}

/**
 * The one way a task changes status: the row and its `task.status` event, in one
 * transaction. Returns the row as it now is.
 */
export async function transition(tx: Tx, task: TasksTable, c: Change): Promise<TasksTable> {
  const patch: Partial<TasksTable> = {
    ...c.patch,
    status: c.to,
    updated_at: tx.now,
    ended_at: isDone(c.to) ? tx.now : null,
  };
  if (c.reason !== undefined) patch.reason = c.reason;
  if (c.result !== undefined) patch.result = c.result;
  await tx.db.updateTable('orchestration_tasks').set(patch).where('id', '=', task.id).execute();
  tx.append({
    zone: task.zone,
    type: 'task.status',
    actor: c.actor,
    session_id: patch.session_id ?? task.session_id,
    payload: {
      task: task.id,
      from: task.status,
      to: c.to,
      ...(c.reason ? { reason: c.reason } : {}),
    },
  });
  return { ...task, ...patch };
}

/** What a task looks like to callers. */
export interface TaskInfo {
  id: string;
  zone: string;
  parentId: string | null;
  title: string;
  status: TaskStatus;
  held: boolean;
  review: boolean;
  onFailure: 'fail' | 'escalate';
  personaId: string | null;
  environment: string;
  sessionId: string | null;
  result: string | null;
  reason: string | null;
  attempts: number;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  endedAt: number | null;
}

export const taskInfo = (r: TasksTable): TaskInfo => ({
  id: r.id,
  zone: r.zone,
  parentId: r.parent_id,
  title: r.title,
  status: r.status,
  held: r.held === 1,
  review: r.review === 1,
  onFailure: r.on_failure,
  personaId: r.persona_id,
  environment: r.environment,
  sessionId: r.session_id,
  result: r.result,
  reason: r.reason,
  attempts: Number(r.attempts),
  createdBy: r.created_by,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  endedAt: r.ended_at === null ? null : Number(r.ended_at),
});

/** The full task: its prompt and what its sessions are spawned with. */
export const taskDetail = (r: TasksTable) => ({
  ...taskInfo(r),
  prompt: r.prompt,
  spawn: parseJson<Record<string, unknown>>(r.spawn, {}),
  budget: r.budget === null ? null : parseJson<Record<string, unknown>>(r.budget, {}),
});
