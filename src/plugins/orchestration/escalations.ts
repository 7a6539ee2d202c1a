import type { Kernel } from '../../kernel/kernel.ts';
import type { IdGenerator } from '../../util/ids.ts';
import { forbidden, WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import { reportTask } from './report.ts';
import type { Tables, TasksTable, Tx } from './schema.ts';
import { isDone, transition } from './tasks.ts';

export interface NewEscalation {
  zone: string;
  taskId: string;
  /** The session that asked; null when the task's failure policy opened it. */
  sessionId: string | null;
  question: string;
  /** What the operator needs to answer: last message, end reason … */
  context: Record<string, unknown>;
  /** Who opened it (a session id, or `kernel`). */
  actor: string;
}

/** Open an escalation to the operator inbox, in the caller's transaction; returns its id. */
export async function openEscalation(tx: Tx, ids: IdGenerator, e: NewEscalation): Promise<string> {
  const id = ids.id('esc');
  await tx.db
    .insertInto('orchestration_escalations')
    .values({
      id,
      zone: e.zone,
      task_id: e.taskId,
      session_id: e.sessionId,
      question: e.question,
      context: JSON.stringify(e.context),
      status: 'open',
      answer: null,
      answered_by: null,
      created_at: tx.now,
      answered_at: null,
    })
    .execute();
  tx.append({
    zone: e.zone,
    type: 'task.escalated',
    actor: e.actor,
    session_id: e.sessionId,
    payload: { escalation: id, task: e.taskId, question: e.question, context: e.context },
  });
  return id;
}

/** How much of a question a waiting task's `reason` shows (the inbox has all of it). */
const REASON_CHARS = 300;

/**
 * `task_escalate`: a session asks a human on behalf of its task (the task whose latest
 * session it is). The task waits (`waiting`, the question its reason) until the operator
 * answers, whatever its session does meanwhile — ends its turn, even stops — and its lead is
 * told (`[TASK] … waiting: <question>`). The escalation, the task's move and the notice
 * commit together. A task that is done, or not started, has nothing to hold.
 */
export async function escalate(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  question: string,
  context: Record<string, unknown>,
): Promise<{ escalation: string; task: string }> {
  if (p.kind !== 'session') throw forbidden('task_escalate is called by the session of a task');
  return tables.write(async (tx) => {
    const task = await tx.db
      .selectFrom('orchestration_tasks')
      .selectAll()
      .where('session_id', '=', p.sessionId)
      .where('zone', '=', p.zone)
      .executeTakeFirst();
    if (!task) {
      throw new WarrenError(
        'not_found',
        `session ${p.sessionId} runs no task: task_escalate asks an operator on behalf of the caller's task`,
        { what: 'task', session: p.sessionId },
      );
    }
    if (isDone(task.status) || task.status === 'pending' || task.status === 'ready') {
      throw new WarrenError(
        'conflict',
        `task ${task.id} is ${task.status}: there is nothing to hold for an answer`,
        {
          task: task.id,
          status: task.status,
        },
      );
    }
    const escalation = await openEscalation(tx, kernel.ids, {
      zone: p.zone,
      taskId: task.id,
      sessionId: p.sessionId,
      question,
      context,
      actor: p.sessionId,
    });
    await hold(tx, kernel, task, question, p.sessionId);
    return { escalation, task: task.id };
  });
}

/** The task waits on the operator, visibly, and its lead hears the question. */
async function hold(tx: Tx, kernel: Kernel, task: TasksTable, question: string, actor: string) {
  const oneLine = question.replace(/\s+/g, ' ').trim();
  const reason = `waiting on the operator: ${oneLine.length > REASON_CHARS ? `${oneLine.slice(0, REASON_CHARS)}…` : oneLine}`;
  const next =
    task.status === 'waiting' ? task : await transition(tx, task, { to: 'waiting', reason, actor });
  if (task.status === 'waiting') {
    await tx.db
      .updateTable('orchestration_tasks')
      .set({ reason, updated_at: tx.now })
      .where('id', '=', task.id)
      .execute();
  }
  await reportTask(tx, kernel, next, 'waiting', question, actor);
}

/**
 * The operator answered a task's escalation: with no other one open, a waiting task runs again.
 */
export async function release(tx: Tx, task: TasksTable, by: string): Promise<TasksTable> {
  if (task.status !== 'waiting') return task;
  const still = await tx.db
    .selectFrom('orchestration_escalations')
    .select('id')
    .where('task_id', '=', task.id)
    .where('status', '=', 'open')
    .executeTakeFirst();
  if (still) return task;
  return transition(tx, task, { to: 'running', reason: null, actor: by });
}

/**
 * Withdraw a task's open escalations (it completed, was cancelled or deleted: an answer
 * would reach nothing), in the caller's transaction; each is logged. Returns their ids.
 */
export async function withdrawEscalations(
  tx: Tx,
  task: { id: string; zone: string },
  actor: string,
  reason: string,
): Promise<string[]> {
  const open = await tx.db
    .selectFrom('orchestration_escalations')
    .select('id')
    .where('task_id', '=', task.id)
    .where('status', '=', 'open')
    .execute();
  if (open.length === 0) return [];
  const ids = open.map((e) => e.id);
  await tx.db
    .updateTable('orchestration_escalations')
    .set({ status: 'withdrawn', answered_by: actor, answered_at: tx.now })
    .where('id', 'in', ids)
    .execute();
  for (const id of ids) {
    tx.append({
      zone: task.zone,
      type: 'escalation.withdrawn',
      actor,
      payload: { escalation: id, task: task.id, reason },
    });
  }
  return ids;
}
