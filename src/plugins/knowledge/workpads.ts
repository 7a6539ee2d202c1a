import { createHash } from 'node:crypto';
import { WarrenError } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import type { TaskDirectory } from '../orchestration/directory.ts';
import type { Tables, WorkpadsTable } from './schema.ts';

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
export async function readWorkpad(
  tables: Tables,
  tasks: TaskDirectory,
  p: Principal,
  ref: string,
): Promise<WorkpadInfo> {
  const t = await tasks.actOn(p, ref, 'read the workpad of');
  return info(t.id, await workpadOf(tables, t.id));
}

/** A task's workpad without access checks (start context: the plugin reads for the task). */
export async function workpadOf(tables: Tables, task: string): Promise<WorkpadsTable | undefined> {
  return tables.reader
    .selectFrom('knowledge_workpads')
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
  tables: Tables,
  tasks: TaskDirectory,
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
  // The task, as orchestration knows it (committed), in the caller's subtree.
  const t = await tasks.actOn(p, ref, 'write the workpad of');
  return tables.write(async (tx) => {
    const db = tx.db;
    const cur = await db
      .selectFrom('knowledge_workpads')
      .selectAll()
      .where('task_id', '=', t.id)
      .executeTakeFirst();
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
        .updateTable('knowledge_workpads')
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
      await db.insertInto('knowledge_workpads').values(row).execute();
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
