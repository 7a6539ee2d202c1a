import type { Kernel } from '../../kernel/kernel.ts';
import { forbidden, notFound, WarrenError } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import { release } from './escalations.ts';
import type { EscalationsTable, Tables, TasksTable, Tx } from './schema.ts';

/**
 * Where an answer went:
 * - `input`: to the task's live session (or the asking session's), as input framed `[ANSWER]`;
 *   a session of a task that still runs (or waits) which has stopped cleanly is reanimated
 *   (resumed) for it;
 * - `retry`: the task's session is gone, so the task is retried with the answer in its prompt;
 * - `prompt`: the task has not been dispatched yet; the answer joins its prompt;
 * - `none`: the task is complete or cancelled (or gone); the answer is recorded only.
 */
export type Delivery = 'input' | 'retry' | 'prompt' | 'none';

export interface AnswerOutcome {
  escalation: string;
  task: string;
  delivered: Delivery;
  /** The session the answer was sent to (`input`). */
  session: string | null;
}

/** The input an agent reads. */
export const answerText = (e: Pick<EscalationsTable, 'id' | 'task_id' | 'question'>, answer: string) =>
  `[ANSWER] An operator answered your escalation ${e.id} (task ${e.task_id}).\nQuestion: ${e.question}\nAnswer: ${answer}`;

/** What a retried (or not yet dispatched) task's prompt gains, so its next session sees the answer. */
export const promptSection = (e: Pick<EscalationsTable, 'id' | 'question'>, answer: string) =>
  `\n\n---\nOperator's answer to your escalation (${e.id}): ${answer}\n(The question was: ${e.question})`;

/**
 * Answer an open escalation: mark it answered (who, when), log `escalation.answered`, and
 * deliver the answer — all in one transaction, so an answer is never recorded and lost.
 */
export async function answerEscalation(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  id: string,
  answer: string,
): Promise<AnswerOutcome> {
  if (p.kind !== 'operator') throw forbidden('escalations are answered by operators');
  const by = principalId(p);
  return tables.write(async (tx) => {
    const db = tx.db;
    const esc = await db
      .selectFrom('orchestration_escalations')
      .selectAll()
      .where('id', '=', id)
      .where('zone', '=', p.zone)
      .executeTakeFirst();
    if (!esc) throw notFound('escalation', id);
    if (esc.status !== 'open') throw closed(esc);
    const marked = await db
      .updateTable('orchestration_escalations')
      .set({ status: 'answered', answer, answered_by: by, answered_at: tx.now })
      .where('id', '=', id)
      .where('status', '=', 'open')
      .executeTakeFirst();
    // Another answer committed between the read and the update (PostgreSQL re-checks the row).
    if (Number(marked.numUpdatedRows) === 0) throw closed({ ...esc, status: 'answered' });
    const found = await db
      .selectFrom('orchestration_tasks')
      .selectAll()
      .where('id', '=', esc.task_id)
      .executeTakeFirst();
    // The escalation held its task: with none left open, it runs again.
    const task = found ? await release(tx, found, by) : undefined;
    const asked = task?.session_id ?? esc.session_id;
    let target = await liveTarget(tx, kernel, asked);
    // Its session ended while the task waited (its turn over, the agent gone): bring it back.
    if (target === null && asked && task && HELD.has(task.status)) {
      if (await kernel.reviveIn(tx, asked, by, `escalation ${id} answered`)) target = asked;
    }
    const delivered = deliveryFor(task, target);
    tx.append({
      zone: esc.zone,
      type: 'escalation.answered',
      actor: by,
      session_id: target ?? esc.session_id,
      payload: { escalation: id, task: esc.task_id, answer, by, delivered, session: target },
    });
    if (delivered === 'input') await kernel.sendIn(tx, p, target as string, answerText(esc, answer));
    else if (delivered === 'retry' || delivered === 'prompt') {
      await requeue(tx, task as TasksTable, esc, answer, delivered === 'retry', by);
    }
    return { escalation: id, task: esc.task_id, delivered, session: delivered === 'input' ? target : null };
  });
}

/** Task statuses whose session an answer may reanimate: the task still needs it. */
const HELD: ReadonlySet<string> = new Set(['running', 'waiting', 'review']);

function closed(esc: EscalationsTable): WarrenError {
  if (esc.status === 'answered') {
    return new WarrenError(
      'already_answered',
      `escalation ${esc.id} was already answered${esc.answered_by ? ` by ${esc.answered_by}` : ''}`,
      { escalation: esc.id, answeredBy: esc.answered_by, answeredAt: esc.answered_at },
    );
  }
  return new WarrenError('conflict', `escalation ${esc.id} is ${esc.status}; there is nothing to answer`, {
    escalation: esc.id,
    status: esc.status,
  });
}

/** `id` if it names a session that is not stopped (running, idle, suspended, pending). */
async function liveTarget(tx: Tx, kernel: Kernel, id: string | null): Promise<string | null> {
  if (id === null) return null;
  const s = await kernel.sessionStateIn(tx, id);
  return s && s.status !== 'stopped' ? id : null;
}

function deliveryFor(task: TasksTable | undefined, live: string | null): Delivery {
  if (live !== null) return 'input';
  if (!task || task.status === 'complete' || task.status === 'cancelled') return 'none';
  if (task.status === 'pending' || task.status === 'ready') return 'prompt';
  return 'retry';
}

/**
 * Put the answer into the task's prompt; on `retry` also send the task back to `pending`
 * (released, its last outcome cleared) for dispatch to give it a new session, and log
 * `task.retried`.
 */
async function requeue(
  tx: Tx,
  task: TasksTable,
  esc: EscalationsTable,
  answer: string,
  retry: boolean,
  by: string,
): Promise<void> {
  const prompt = task.prompt + promptSection(esc, answer);
  const update = tx.db.updateTable('orchestration_tasks').where('id', '=', task.id);
  if (!retry) {
    await update.set({ prompt, updated_at: tx.now }).execute();
    return;
  }
  await update
    .set({
      prompt,
      status: 'pending',
      held: 0,
      result: null,
      reason: null,
      ended_at: null,
      updated_at: tx.now,
    })
    .execute();
  tx.append({
    zone: task.zone,
    type: 'task.retried',
    actor: by,
    payload: { task: task.id, escalation: esc.id },
  });
}
