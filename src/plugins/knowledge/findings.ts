import type { Kernel } from '../../kernel/kernel.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import type { TaskDirectory } from '../orchestration/directory.ts';
import type { FindingsTable, Tables } from './schema.ts';
import type { FindingRow, Hit } from './search.ts';

export interface NewFinding {
  title: string;
  body: string;
  tags?: string[] | undefined;
  task?: string | undefined;
}

/** A finding as callers see it. */
export interface FindingInfo {
  id: string;
  zone: string;
  title: string;
  body: string;
  tags: string[];
  task: string | null;
  session: string | null;
  createdBy: string;
  createdAt: number;
}

export const findingInfo = (r: Omit<FindingsTable, 'n'>): FindingInfo => ({
  id: r.id,
  zone: r.zone,
  title: r.title,
  body: r.body,
  tags: r.tags === '' ? [] : r.tags.split(' '),
  task: r.task_id,
  session: r.session_id,
  createdBy: r.created_by,
  createdAt: Number(r.created_at),
});

export const hitInfo = (h: Hit) => ({ ...findingInfo(h.row), score: h.score });

/**
 * Post a finding. Its session is the caller's own (a session cannot speak for another); its
 * task is the one named — in the caller's task subtree — else the caller's own task.
 */
export async function postFinding(
  kernel: Kernel,
  tables: Tables,
  tasks: TaskDirectory,
  p: Principal,
  n: NewFinding,
  maxBytes: number,
): Promise<FindingInfo> {
  const bytes = Buffer.byteLength(n.body);
  if (bytes > maxBytes) {
    throw new WarrenError('invalid_input', `body is ${bytes} bytes, over the cap of ${maxBytes}`, {
      field: 'body',
      bytes,
      maxBytes,
    });
  }
  const tags = [...new Set(n.tags ?? [])];
  // The task, as orchestration knows it (committed): named and in the caller's subtree, or its own.
  const task =
    n.task !== undefined ? (await tasks.actOn(p, n.task, 'post findings for')).id : await tasks.ownTask(p);
  return tables.write(async (tx) => {
    const db = tx.db;
    const row: Omit<FindingsTable, 'n'> = {
      id: kernel.ids.id('fnd'),
      zone: p.zone,
      title: n.title,
      body: n.body,
      tags: tags.join(' '),
      task_id: task,
      session_id: p.kind === 'session' ? p.sessionId : null,
      created_by: principalId(p),
      created_at: tx.now,
    };
    await db.insertInto('knowledge_findings').values(row).execute();
    if (tags.length > 0) {
      await db
        .insertInto('knowledge_finding_tags')
        .values(tags.map((tag) => ({ finding_id: row.id, zone: p.zone, tag })))
        .execute();
    }
    tx.append({
      zone: p.zone,
      type: 'knowledge.posted',
      actor: principalId(p),
      session_id: row.session_id,
      payload: { finding: row.id, title: row.title, task, tags, bytes },
    });
    return findingInfo(row);
  });
}

/** A finding of `zone`, or `not_found`. */
export async function showFinding(tables: Tables, zone: string, id: string): Promise<FindingInfo> {
  const row = await tables.reader
    .selectFrom('knowledge_findings')
    .selectAll()
    .where('id', '=', id)
    .where('zone', '=', zone)
    .executeTakeFirst();
  if (!row)
    throw new WarrenError('not_found', `finding ${JSON.stringify(id)} does not exist`, {
      what: 'finding',
      id,
    });
  return findingInfo(row);
}

/** The newest findings of some tasks (start context: dependencies, ancestors). */
export async function findingsOfTasks(
  tables: Tables,
  zone: string,
  tasks: readonly string[],
  limit: number,
): Promise<FindingRow[]> {
  if (tasks.length === 0) return [];
  const rows = await tables.reader
    .selectFrom('knowledge_findings')
    .selectAll()
    .where('zone', '=', zone)
    .where('task_id', 'in', tasks)
    .orderBy('n', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, n: Number(r.n), created_at: Number(r.created_at) }));
}
