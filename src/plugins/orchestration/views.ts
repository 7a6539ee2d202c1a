import { sql } from 'kysely';
import { DEFAULT_PAGE } from '../../contract/schemas.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { SessionInfo } from '../../kernel/records.ts';
import { keysetPage } from '../../store/paging.ts';
import type { Principal } from '../../vocab/principal.ts';
import { requireActOn, subtreeRoots } from './access.ts';
import type { Tables, TaskStatus, TasksTable } from './schema.ts';
import {
  childIds,
  depsOf,
  ensureRoot,
  rootIdOf,
  type TaskInfo,
  taskById,
  taskDetail,
  taskInfo,
  taskInZone,
  taskRef,
} from './tasks.ts';

/** Reading tasks: a page of a list, one task in full, the tree under one. */

export interface ListQuery {
  status?: TaskStatus | undefined;
  parent?: string | undefined;
  limit?: number | undefined;
  after?: string | undefined;
}

/**
 * A page of the zone's tasks (operators) or of the caller's subtree (sessions), in id
 * order (creation order), optionally one status or one parent's children.
 */
export async function listTasks(tables: Tables, p: Principal, q: ListQuery) {
  const db = tables.reader;
  const limit = q.limit ?? DEFAULT_PAGE;
  let query = db.selectFrom('orchestration_tasks').selectAll().where('zone', '=', p.zone);
  if (q.parent !== undefined) {
    const parent = await taskInZone(db, p.zone, q.parent);
    if (parent.id !== rootIdOf(p.zone)) await requireActOn(db, p, parent, 'list the children of');
    query = query.where('parent_id', '=', parent.id);
    if (p.kind === 'session' && parent.id === rootIdOf(p.zone))
      query = query.where('created_by', '=', p.sessionId);
  } else if (p.kind === 'session') {
    const roots = await subtreeRoots(db, p);
    if (roots.length === 0) return { tasks: [], next: null };
    // The caller's subtree, walked in the database (both dialects have recursive CTEs).
    query = query.where(
      'id',
      'in',
      sql<string>`(with recursive sub(id) as (select id from orchestration_tasks where id in (${sql.join(roots)}) union select t.id from orchestration_tasks t join sub on t.parent_id = sub.id) select id from sub)`,
    );
  }
  if (q.status !== undefined) query = query.where('status', '=', q.status);
  if (q.after !== undefined) query = query.where('id', '>', q.after);
  const { items: page, next } = await keysetPage(limit, (n) => query.orderBy('id').limit(n).execute());
  // Each task's dependencies in one read for the page, so a DAG view needs no call per task.
  const deps = new Map<string, string[]>();
  if (page.length > 0) {
    const edges = await db
      .selectFrom('orchestration_task_deps')
      .select(['task_id', 'depends_on'])
      .where(
        'task_id',
        'in',
        page.map((t) => t.id),
      )
      .orderBy('task_id')
      .orderBy('depends_on')
      .execute();
    for (const e of edges) deps.set(e.task_id, [...(deps.get(e.task_id) ?? []), e.depends_on]);
  }
  return {
    tasks: page.map((t) => ({ ...taskInfo(t), dependsOn: deps.get(t.id) ?? [] })),
    next,
  };
}

/** One task in full: its dependencies, its children, its latest session. */
export async function showTask(kernel: Kernel, tables: Tables, p: Principal, ref: string) {
  const db = tables.reader;
  const t = await taskInZone(db, p.zone, ref);
  if (t.id !== rootIdOf(p.zone)) await requireActOn(db, p, t, 'see');
  let session: SessionInfo | null = null;
  if (t.session_id) {
    // Read as the zone's operator: the task check above is the access decision.
    session = await kernel
      .session({ kind: 'operator', name: 'orchestration', zone: p.zone }, t.session_id)
      .catch(() => null);
  }
  return {
    task: taskDetail(t),
    dependsOn: await depsOf(db, t.id),
    children: await childIds(db, t.id),
    session,
  };
}

export interface TreeNode {
  task: TaskInfo;
  children: TreeNode[];
}

/** Most tasks one tree answer holds. */
export const MAX_TREE = 2000;

/** The tree under a task (default the root), level by level, as nested nodes; `truncated` past MAX_TREE. */
export async function taskTree(tables: Tables, p: Principal, ref: string | undefined) {
  const db = tables.reader;
  const id = taskRef(p.zone, ref ?? 'root');
  // A zone with no task yet still has a tree: its root.
  if (id === rootIdOf(p.zone) && !(await taskById(db, id))) {
    await tables.write((tx) => ensureRoot(tx, p.zone));
  }
  const top = await taskInZone(db, p.zone, id);
  if (top.id !== rootIdOf(p.zone)) await requireActOn(db, p, top, 'see');
  const nodes = new Map<string, TreeNode>([[top.id, { task: taskInfo(top), children: [] }]]);
  let frontier = [top.id];
  let truncated = false;
  while (frontier.length > 0 && !truncated) {
    let q = db.selectFrom('orchestration_tasks').selectAll().where('parent_id', 'in', frontier);
    // A session sees, under the root, only the tasks it made.
    if (p.kind === 'session' && frontier.includes(rootIdOf(p.zone))) {
      q = q.where((eb) =>
        eb.or([eb('parent_id', '!=', rootIdOf(p.zone)), eb('created_by', '=', p.sessionId)]),
      );
    }
    const rows: TasksTable[] = await q
      .orderBy('id')
      .limit(MAX_TREE + 1 - nodes.size)
      .execute();
    if (nodes.size + rows.length > MAX_TREE) truncated = true;
    const next: string[] = [];
    for (const r of rows.slice(0, MAX_TREE - nodes.size)) {
      const node = { task: taskInfo(r), children: [] };
      nodes.set(r.id, node);
      nodes.get(r.parent_id as string)?.children.push(node);
      next.push(r.id);
    }
    frontier = next;
  }
  return { tree: nodes.get(top.id) as TreeNode, truncated };
}
