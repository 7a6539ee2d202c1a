import { DEFAULT_PAGE } from '../../contract/schemas.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import { keysetPage } from '../../store/paging.ts';
import { parseJson } from '../../util/json.ts';
import { forbidden, notFound } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import type { EscalationsTable, Tables } from './schema.ts';

/**
 * The operator inbox: a zone's escalations, open ones by default. Pages are keyset pages
 * on the escalation id (a ULID: creation order) over the `(zone, status, id)` and
 * `(zone, id)` indexes, so a page costs its own size whatever the inbox holds.
 */

export interface InboxItem {
  id: string;
  task: string;
  taskTitle: string | null;
  /** The session that asked; null when the task's failure policy escalated. */
  session: string | null;
  question: string;
  status: EscalationsTable['status'];
  createdAt: number;
  ageMs: number;
  answeredBy: string | null;
  answeredAt: number | null;
}

/** What the inbox lists: the item with its context and the answer given. */
export interface InboxEntry extends InboxItem {
  context: Record<string, unknown>;
  answer: string | null;
}

export interface Escalation extends InboxEntry {
  taskStatus: string | null;
  /** The task's latest session, which an answer goes to while it lives. */
  taskSession: string | null;
}

export const DEFAULT_INBOX_PAGE = DEFAULT_PAGE;

const operatorOnly = (p: Principal) => {
  if (p.kind !== 'operator') throw forbidden('the inbox is read by operators');
};

export async function listInbox(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  q: { all?: boolean | undefined; limit?: number | undefined; after?: string | undefined },
): Promise<{ escalations: InboxEntry[]; next: string | null }> {
  operatorOnly(p);
  const limit = q.limit ?? DEFAULT_INBOX_PAGE;
  let query = tables.reader
    .selectFrom('orchestration_escalations as e')
    .leftJoin('orchestration_tasks as t', 't.id', 'e.task_id')
    .select([
      'e.id',
      'e.task_id',
      'e.session_id',
      'e.question',
      'e.status',
      'e.created_at',
      'e.answered_by',
      'e.answered_at',
      'e.context',
      'e.answer',
      't.title',
    ])
    .where('e.zone', '=', p.zone);
  if (!q.all) query = query.where('e.status', '=', 'open');
  if (q.after !== undefined) query = query.where('e.id', '>', q.after);
  const { items, next } = await keysetPage(limit, (n) => query.orderBy('e.id').limit(n).execute());
  const now = kernel.clock.now();
  // The context and the answer ride along: the inbox is answered in place, with what the agent gave.
  const escalations = items.map((r) => ({
    ...itemOf(r, now),
    context: parseJson<Record<string, unknown>>(r.context, {}),
    answer: r.answer,
  }));
  return { escalations, next };
}

export async function showEscalation(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  id: string,
): Promise<Escalation> {
  operatorOnly(p);
  const r = await tables.reader
    .selectFrom('orchestration_escalations as e')
    .leftJoin('orchestration_tasks as t', 't.id', 'e.task_id')
    .selectAll('e')
    .select(['t.title', 't.status as task_status', 't.session_id as task_session'])
    .where('e.id', '=', id)
    .where('e.zone', '=', p.zone)
    .executeTakeFirst();
  if (!r) throw notFound('escalation', id);
  return {
    ...itemOf(r, kernel.clock.now()),
    context: parseJson<Record<string, unknown>>(r.context, {}),
    answer: r.answer,
    taskStatus: r.task_status,
    taskSession: r.task_session,
  };
}

/** An escalation row (with its task's title) as the inbox lists it, aged at `now`. */
function itemOf(
  r: Omit<EscalationsTable, 'zone' | 'context' | 'answer'> & { title: string | null },
  now: number,
): InboxItem {
  return {
    id: r.id,
    task: r.task_id,
    taskTitle: r.title,
    session: r.session_id,
    question: r.question,
    status: r.status,
    createdAt: Number(r.created_at),
    ageMs: Math.max(0, now - Number(r.created_at)),
    answeredBy: r.answered_by,
    answeredAt: r.answered_at === null ? null : Number(r.answered_at),
  };
}
