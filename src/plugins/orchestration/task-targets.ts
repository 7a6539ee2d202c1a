import type { Kysely } from 'kysely';
import type { DurableAttachment, SessionTargets } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { DeliveryMode, Permission } from '../../store/schema.ts';
import type { WriteTx } from '../../store/writer.ts';
import { notFound } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import { type OrchestrationDb, odb } from './schema.ts';

/** Task ids are `task_<ulid>`: anything else is not ours, and costs no query. */
export const isTaskId = (id: string): boolean => id.startsWith('task_');

/** The most durable attachments one task lists (a zone's rooms bound it in practice). */
const MAX_LISTED = 1000;

/**
 * A task id stands for its task's latest live session (room commands accept it), and keeps
 * durable room attachments in `task_attachments`; TaskRooms re-applies them to each new
 * session. Every query is by primary key or the task's zone.
 */
export function taskTargets(kernel: Kernel): SessionTargets {
  const db = () => odb(kernel.store.reader);

  /** The task in `zone`, or not_found: another zone's tasks do not exist for its operators. */
  const taskIn = async (zone: string, id: string, on: Kysely<OrchestrationDb> = db()) => {
    const row = await on
      .selectFrom('tasks')
      .leftJoin('sessions', 'sessions.id', 'tasks.session_id')
      .select(['tasks.id', 'tasks.session_id', 'sessions.status'])
      .where('tasks.id', '=', id)
      .where('tasks.zone', '=', zone)
      .executeTakeFirst();
    if (!row) throw notFound('task', id);
    return row;
  };

  return {
    async resolve(zone, id) {
      if (!isTaskId(id)) return undefined;
      const task = await taskIn(zone, id);
      return task.session_id !== null && task.status != null && task.status !== 'stopped'
        ? task.session_id
        : null;
    },
    durable: {
      async attach(by: Principal, id: string, stream, permission: Permission, mode: DeliveryMode) {
        const actor = principalId(by);
        await kernel.store.writer.write(async (tx) => {
          await taskIn(by.zone, id, odb(tx.db));
          await odb(tx.db)
            .insertInto('task_attachments')
            .values({
              task_id: id,
              stream_id: stream.id,
              zone: by.zone,
              permission,
              mode,
              created_by: actor,
              created_at: tx.now,
            })
            .onConflict((oc) => oc.columns(['task_id', 'stream_id']).doUpdateSet({ permission, mode }))
            .execute();
          tx.append({
            zone: by.zone,
            type: 'task.room_attached',
            actor,
            stream_id: stream.id,
            payload: { task: id, stream: stream.id, streamName: stream.name, permission, mode },
          });
        });
      },
      async detach(by: Principal, id: string, streamId: string) {
        return kernel.store.writer.write(async (tx) => {
          await taskIn(by.zone, id, odb(tx.db));
          return forgetAttachment(tx, by.zone, id, streamId, principalId(by));
        });
      },
      async list(zone: string, id: string): Promise<DurableAttachment[]> {
        await taskIn(zone, id);
        const rows = await db()
          .selectFrom('task_attachments')
          .innerJoin('streams', 'streams.id', 'task_attachments.stream_id')
          .select([
            'task_attachments.stream_id',
            'streams.name',
            'task_attachments.permission',
            'task_attachments.mode',
            'task_attachments.created_by',
            'task_attachments.created_at',
          ])
          .where('task_attachments.task_id', '=', id)
          .orderBy('task_attachments.created_at')
          .orderBy('task_attachments.stream_id')
          .limit(MAX_LISTED)
          .execute();
        return rows.map((r) => ({
          streamId: r.stream_id,
          streamName: r.name,
          permission: r.permission,
          mode: r.mode,
          createdBy: r.created_by,
          createdAt: Number(r.created_at),
        }));
      },
    },
  };
}

/** Remove a durable attachment (logged); true when there was one. */
export async function forgetAttachment(
  tx: WriteTx,
  zone: string,
  task: string,
  streamId: string,
  actor: string,
  reason?: string,
): Promise<boolean> {
  const gone = await odb(tx.db)
    .deleteFrom('task_attachments')
    .where('task_id', '=', task)
    .where('stream_id', '=', streamId)
    .executeTakeFirst();
  if (Number(gone.numDeletedRows) === 0) return false;
  tx.append({
    zone,
    type: 'task.room_detached',
    actor,
    stream_id: streamId,
    payload: { task, stream: streamId, ...(reason ? { reason } : {}) },
  });
  return true;
}
