import { createHash } from 'node:crypto';
import type { Kernel } from '../../kernel/kernel.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import { requireActOn } from '../orchestration/access.ts';
import { taskInZone } from '../orchestration/tasks.ts';
import { kdb, type WorkpadsTable } from './schema.ts';

/** A workpad as callers see it; version 0 and an empty body before the first write. */
export interface WorkpadInfo {
  task: string;
  body: string;
  version: number;
  updatedBy: string | null;
  updatedAt: number | null;
}

/** A stale version: the typed error a writer retries on (after reading again). */
const conflict = (message: string, details: Record<string, unknown>) =>
  new WarrenError('conflict', message, { ...details, reason: 'stale_version' });

const info = (task: string, r: WorkpadsTable | undefined): WorkpadInfo => ({
  task,
  body: r?.body ?? '',
  version: Number(r?.version ?? 0),
  updatedBy: r?.updated_by ?? null,
  updatedAt: r ? Number(r.updated_at) : null,
});

/** The workpad of a task of the caller's subtree (an operator: any task of the zone). */
export async function readWorkpad(kernel: Kernel, p: Principal, ref: string): Promise<WorkpadInfo> {
  const db = kernel.store.reader;
  const t = await taskInZone(db, p.zone, ref);
  await requireActOn(db, p, t, 'read the workpad of');
  const row = await kdb(db).selectFrom('workpads').selectAll().where('task_id', '=', t.id).executeTakeFirst();
  return info(t.id, row);
}

/** A task's workpad without access checks (start context: the plugin reads for the task). */
export async function workpadOf(kernel: Kernel, task: string): Promise<WorkpadsTable | undefined> {
  return kdb(kernel.store.reader)
    .selectFrom('workpads')
    .selectAll()
    .where('task_id', '=', task)
    .executeTakeFirst();
}

/**
 * Replace a workpad's text if it is still at `version` (optimistic: two sessions editing
 * the same workpad never lose each other's write silently). A stale version is `conflict`,
 * naming the current one.
 */
export async function writeWorkpad(
  kernel: Kernel,
  p: Principal,
  ref: string,
  body: string,
  version: number,
  maxBytes: number,
): Promise<WorkpadInfo> {
  const bytes = Buffer.byteLength(body);
  if (bytes > maxBytes) {
    throw new WarrenError('invalid_input', `body is ${bytes} bytes, over the cap of ${maxBytes}`, {
      field: 'body',
      bytes,
      maxBytes,
    });
  }
  return kernel.store.writer.write(async (tx) => {
    const db = kdb(tx.db);
    const t = await taskInZone(tx.db, p.zone, ref);
    await requireActOn(tx.db, p, t, 'write the workpad of');
    const cur = await db.selectFrom('workpads').selectAll().where('task_id', '=', t.id).executeTakeFirst();
    const current = Number(cur?.version ?? 0);
    if (current !== version) {
      throw conflict(
        `the workpad of ${t.id} is at version ${current}, not ${version}: read it again and redo your change`,
        { task: t.id, expected: version, current },
      );
    }
    const row: WorkpadsTable = {
      task_id: t.id,
      zone: t.zone,
      body,
      version: current + 1,
      updated_by: principalId(p),
      updated_at: tx.now,
    };
    if (cur) {
      // The version in the where clause as well: a row lock on PostgreSQL is not needed.
      const r = await db
        .updateTable('workpads')
        .set({ body, version: row.version, updated_by: row.updated_by, updated_at: row.updated_at })
        .where('task_id', '=', t.id)
        .where('version', '=', current)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) {
        throw conflict(`the workpad of ${t.id} changed meanwhile: read it again and redo your change`, {
          task: t.id,
          expected: version,
        });
      }
    } else {
      await db.insertInto('workpads').values(row).execute();
    }
    tx.append({
      zone: t.zone,
      type: 'workpad.written',
      actor: principalId(p),
      session_id: p.kind === 'session' ? p.sessionId : null,
      payload: {
        task: t.id,
        version: row.version,
        bytes,
        sha256: createHash('sha256').update(body).digest('hex'),
      },
    });
    return info(t.id, row);
  });
}
