import { WarrenError } from '../../vocab/errors.ts';
import type { Db } from './schema.ts';
import { isRootId, taskRef } from './tasks.ts';

/** The dependency DAG: dependencies exist, stay in the zone, and never close a cycle. */

/** Most dependencies one task may have. */
export const MAX_DEPS = 100;
/** Most tasks a cycle check walks (a DAG larger than this is refused, not searched forever). */
const MAX_WALK = 20_000;

/**
 * Check the dependencies `task` would have: each exists in `zone` and is neither the root
 * nor the task itself nor one of its ancestors (a parent is not complete while a child is
 * open, so that would wait forever); adding them closes no cycle. Returns them, deduplicated.
 */
export async function checkDeps(
  db: Db,
  zone: string,
  task: string,
  deps: readonly string[],
  /** For a task not inserted yet: the parent it will have. */
  parent?: string,
): Promise<string[]> {
  const ids = [...new Set(deps.map((d) => taskRef(zone, d)))];
  if (ids.length > MAX_DEPS) {
    throw new WarrenError('invalid_input', `a task has at most ${MAX_DEPS} dependencies`, { max: MAX_DEPS });
  }
  if (ids.length === 0) return ids;
  const rows = await db
    .selectFrom('orchestration_tasks')
    .select(['id', 'zone'])
    .where('id', 'in', ids)
    .execute();
  for (const id of ids) {
    if (!rows.some((r) => r.id === id && r.zone === zone)) {
      throw new WarrenError('not_found', `dependency ${JSON.stringify(id)} does not exist`, {
        what: 'task',
        id,
      });
    }
    if (isRootId(id)) throw new WarrenError('invalid_input', 'a task cannot depend on the root task');
  }
  const ancestors = parent ? [parent, ...(await ancestorsOf(db, parent))] : await ancestorsOf(db, task);
  for (const id of ids) {
    if (id === task) throw cycle([task, task]);
    if (ancestors.includes(id)) {
      throw new WarrenError('invalid_input', `${task} cannot depend on its own ancestor ${id}`, {
        task,
        dependsOn: id,
      });
    }
  }
  const path = await findPath(db, ids, task);
  if (path) throw cycle([task, ...path]);
  return ids;
}

const cycle = (path: string[]) =>
  new WarrenError('dependency_cycle', `dependency cycle: ${path.join(' → ')}`, { cycle: path });

/** The parent chain of a task, nearest first (empty for a task not yet inserted). */
async function ancestorsOf(db: Db, id: string): Promise<string[]> {
  const out: string[] = [];
  let cur = await db
    .selectFrom('orchestration_tasks')
    .select('parent_id')
    .where('id', '=', id)
    .executeTakeFirst();
  while (cur?.parent_id && out.length < MAX_WALK) {
    out.push(cur.parent_id);
    cur = await db
      .selectFrom('orchestration_tasks')
      .select('parent_id')
      .where('id', '=', cur.parent_id)
      .executeTakeFirst();
  }
  return out;
}

/** A path of dependency edges from one of `from` to `target` (breadth first, level by level), or null. */
async function findPath(db: Db, from: readonly string[], target: string): Promise<string[] | null> {
  const prev = new Map<string, string | null>(from.map((id) => [id, null]));
  let frontier = [...from];
  while (frontier.length > 0) {
    if (frontier.includes(target)) return pathTo(prev, target);
    if (prev.size > MAX_WALK) {
      throw new WarrenError(
        'invalid_input',
        `the dependency graph is larger than ${MAX_WALK} tasks to check`,
      );
    }
    const edges = await db
      .selectFrom('orchestration_task_deps')
      .select(['task_id', 'depends_on'])
      .where('task_id', 'in', frontier)
      .execute();
    const next: string[] = [];
    for (const e of edges) {
      if (prev.has(e.depends_on)) continue;
      prev.set(e.depends_on, e.task_id);
      next.push(e.depends_on);
    }
    frontier = next;
  }
  return null;
}

function pathTo(prev: Map<string, string | null>, id: string): string[] {
  const out = [id];
  let cur = prev.get(id) ?? null;
  while (cur !== null) {
    out.unshift(cur);
    cur = prev.get(cur) ?? null;
  }
  return out;
}
