import type { WriteTx } from '../../store/writer.ts';
import type { IdGenerator } from '../../util/ids.ts';
import { odb } from './schema.ts';

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
export async function openEscalation(tx: WriteTx, ids: IdGenerator, e: NewEscalation): Promise<string> {
  const id = ids.id('esc');
  await odb(tx.db)
    .insertInto('escalations')
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
