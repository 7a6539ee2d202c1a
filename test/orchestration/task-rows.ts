/**
 * Task rows for tests of the inbox and task-keyed rooms, written straight into the
 * orchestration plugin's tables (these tests do not depend on task creation or dispatch).
 */
import type { Kysely } from 'kysely';
import type { OrchestrationSelf } from '../../src/plugins/orchestration/instance.ts';
import type { OrchestrationDb, TasksTable } from '../../src/plugins/orchestration/schema.ts';
import type { Warren } from '../../src/syscalls/warren.ts';

/** The orchestration plugin's handle on its own tables (while it is loaded). */
export const orchestrationTables = (w: Warren) => w.plugins.get<OrchestrationSelf>('orchestration').tables;

/** Its tables through the whole store: these helpers also write while the plugin is off. */
const odb = (db: unknown) => db as Kysely<OrchestrationDb>;

export async function insertTask(w: Warren, t: Partial<TasksTable> = {}): Promise<string> {
  const id = t.id ?? w.kernel.ids.id('task');
  await w.store.writer.write(async (tx) => {
    await odb(tx.db)
      .insertInto('orchestration_tasks')
      .values({
        id,
        zone: 'default',
        parent_id: null,
        title: 'a task',
        prompt: 'do the thing',
        persona_id: null,
        environment: 'local',
        spawn: '{}',
        budget: null,
        review: 0,
        on_failure: 'fail',
        held: 0,
        status: t.session_id ? 'running' : 'pending',
        session_id: null,
        result: null,
        reason: null,
        attempts: t.session_id ? 1 : 0,
        created_by: 'operator:admin',
        created_at: tx.now,
        updated_at: tx.now,
        ended_at: null,
        ...t,
      })
      .execute();
  });
  return id;
}

export const taskRow = async (w: Warren, id: string): Promise<TasksTable> =>
  odb(w.store.reader)
    .selectFrom('orchestration_tasks')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** What dispatch does, as one writer transaction: point the task at a new session and log it. */
export async function simulateDispatch(w: Warren, task: string, session: string): Promise<void> {
  await w.store.writer.write(async (tx) => {
    const row = await odb(tx.db)
      .selectFrom('orchestration_tasks')
      .select('attempts')
      .where('id', '=', task)
      .executeTakeFirstOrThrow();
    const attempt = row.attempts + 1;
    await odb(tx.db)
      .updateTable('orchestration_tasks')
      .set({ session_id: session, status: 'running', attempts: attempt, updated_at: tx.now })
      .where('id', '=', task)
      .execute();
    tx.append({
      zone: 'default',
      type: 'task.dispatched',
      actor: 'kernel',
      session_id: session,
      payload: { task, session, attempt },
    });
  });
}
