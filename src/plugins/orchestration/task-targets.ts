import type { DurableAttachment, SessionTargets } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { DeliveryMode, Permission } from '../../store/schema.ts';
import { notFound } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import type { Db, Tables, Tx } from './schema.ts';

/** Task ids are `task_<ulid>`: anything else is not ours, and costs no query. */
export const isTaskId = (id: string): boolean => id.startsWith('task_');

/** The most durable attachments one task lists (a zone's rooms bound it in practice). */
const MAX_LISTED = 1000;

/**
 * A task id stands for its task's latest live session (room commands accept it), and keeps
 * durable room attachments in `orchestration_task_attachments`; TaskRooms re-applies them to each new
 * session. Every query is by primary key or the task's zone.
 */
export function taskTargets(kernel: Kernel, tables: Tables): SessionTargets {
  /** The task in `zone`, or not_found: another zone's tasks do not exist for its operators. */
  const taskIn = async (zone: string, id: string, on: Db = tables.reader) => {
    const row = await on
      .selectFrom('orchestration_tasks')
      .select(['id', 'session_id'])
      .where('id', '=', id)
      .where('zone', '=', zone)
      .executeTakeFirst();
    if (!row) throw notFound('task', id);
    return row;
  };

  return {
    async resolve(zone, id) {
      if (!isTaskId(id)) return undefined;
      const task = await taskIn(zone, id);
      if (task.session_id === null) return null;
      const s = await kernel.sessionState(task.session_id);
      return s && s.status !== 'stopped' ? task.session_id : null;
    },
    durable: {
      async attach(by: Principal, id: string, stream, permission: Permission, mode: DeliveryMode) {
        const actor = principalId(by);
        await tables.write(async (tx) => {
          await taskIn(by.zone, id, tx.db);
          await tx.db
            .insertInto('orchestration_task_attachments')
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
        return tables.write(async (tx) => {
          await taskIn(by.zone, id, tx.db);
          return forgetAttachment(tx, by.zone, id, streamId, principalId(by));
        });
      },
      async list(zone: string, id: string): Promise<DurableAttachment[]> {
        await taskIn(zone, id);
        const rows = await tables.reader
          .selectFrom('orchestration_task_attachments')
          .select(['stream_id', 'permission', 'mode', 'created_by', 'created_at'])
          .where('task_id', '=', id)
          .orderBy('created_at')
          .orderBy('stream_id')
          .limit(MAX_LISTED)
          .execute();
        const names = await kernel.streamNamesById(rows.map((r) => r.stream_id));
        return rows.flatMap((r) => {
          const name = names.get(r.stream_id);
          if (name === undefined) return [];
          return [
            {
              streamId: r.stream_id,
              streamName: name,
              permission: r.permission,
              mode: r.mode,
              createdBy: r.created_by,
              createdAt: Number(r.created_at),
            },
          ];
        });
      },
    },
  };
}

/** Remove a durable attachment (logged); true when there was one. */
export async function forgetAttachment(
  tx: Tx,
  zone: string,
  task: string,
  streamId: string,
  actor: string,
  reason?: string,
): Promise<boolean> {
  const gone = await tx.db
    .deleteFrom('orchestration_task_attachments')
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
