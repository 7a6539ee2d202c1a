import type { Principal } from '../../vocab/principal.ts';
import { ownTask, requireActOn } from './access.ts';
import type { Tables } from './schema.ts';
import { depsOf, taskInZone } from './tasks.ts';

/**
 * What other plugins may know of tasks (knowledge keeps findings and workpads by task):
 * answers read from committed rows, so no other plugin reads this one's tables.
 */
export interface TaskDirectory {
  /**
   * A task of the caller's zone that the caller may act on (`root`: the zone's root task):
   * not_found for a task that is not there, forbidden outside a session's subtree (`what`
   * is what the caller wanted to do, for the message).
   */
  actOn(p: Principal, ref: string, what: string): Promise<{ id: string; zone: string }>;
  /** The task the caller's session runs (is the latest session of) in its zone; null for an operator. */
  ownTask(p: Principal): Promise<string | null>;
  /** The tasks `id` depends on. */
  dependencies(id: string): Promise<string[]>;
  /** Its parent, grandparent, … up to the zone's root task (included), at most `max` of them. */
  ancestors(id: string, max: number): Promise<string[]>;
}

export function taskDirectory(tables: Tables): TaskDirectory {
  const db = tables.reader;
  const parentOf = async (id: string) =>
    (await db.selectFrom('orchestration_tasks').select('parent_id').where('id', '=', id).executeTakeFirst())
      ?.parent_id ?? null;
  return {
    async actOn(p, ref, what) {
      const t = await taskInZone(db, p.zone, ref);
      await requireActOn(db, p, t, what);
      return { id: t.id, zone: t.zone };
    },
    async ownTask(p) {
      if (p.kind !== 'session') return null;
      const own = await ownTask(db, p.sessionId);
      return own && own.zone === p.zone ? own.id : null;
    },
    dependencies: (id) => depsOf(db, id),
    async ancestors(id, max) {
      const out: string[] = [];
      let parent = await parentOf(id);
      while (parent && out.length < max && !out.includes(parent)) {
        out.push(parent);
        parent = await parentOf(parent);
      }
      return out;
    },
  };
}
