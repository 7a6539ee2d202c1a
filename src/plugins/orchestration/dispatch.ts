import { createHash } from 'node:crypto';
import type { PluginContext, StartContextPart } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { Budget, SpawnRequest } from '../../kernel/types.ts';
import { parseJson } from '../../util/json.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { isOperatorId, type Principal } from '../../vocab/principal.ts';
import { ACTOR, finish } from './follow.ts';
import { REPORTER } from './report.ts';
import type { Tables, TasksTable, Tx } from './schema.ts';
import { taskById, transition } from './tasks.ts';
import type { SpawnTemplate } from './template.ts';
import { spawnRequestOf } from './template.ts';

/**
 * Dispatch: a pending task whose dependencies are all complete, which is not held, whose
 * parent task has started and whose environment is connected becomes `ready`; a ready task
 * gets a session through the one spawn path, spawned by its parent task's live session (a
 * pipe joins them; its outcomes wake the parent as `[TASK]` lines), or by the plugin as an operator
 * (a child of init) when the parent is the root or has no live session.
 */

/**
 * Decide whether a pending or ready task may run now, recording why not (`reason`) when it
 * may not. Returns the task, ready, when it may.
 */
export async function gate(tx: Tx, kernel: Kernel, t: TasksTable): Promise<TasksTable | null> {
  const wait = async (reason: string): Promise<null> => {
    if (t.status === 'ready') await transition(tx, t, { to: 'pending', reason, actor: ACTOR });
    else if (t.reason !== reason) {
      await tx.db
        .updateTable('orchestration_tasks')
        .set({ reason, updated_at: tx.now })
        .where('id', '=', t.id)
        .execute();
    }
    return null;
  };
  if (t.held === 1) return wait('held: task start releases it');
  if (!kernel.environmentOnline(t.environment)) return wait(`environment ${t.environment} is not connected`);
  const deps = await tx.db
    .selectFrom('orchestration_task_deps')
    .innerJoin('orchestration_tasks', 'orchestration_tasks.id', 'orchestration_task_deps.depends_on')
    .select(['orchestration_tasks.id', 'orchestration_tasks.status'])
    .where('orchestration_task_deps.task_id', '=', t.id)
    .orderBy('orchestration_tasks.id')
    .execute();
  const failed = deps.find((d) => d.status === 'failed' || d.status === 'cancelled');
  if (failed) return wait(`waiting on ${failed.status} task ${failed.id}`);
  // A dependency held by an open escalation says so: the operator is what it waits for.
  const open = deps
    .filter((d) => d.status !== 'complete')
    .map((d) => (d.status === 'waiting' ? `${d.id} (waiting on the operator)` : d.id));
  if (open.length > 0) {
    return wait(
      `waiting on ${open.slice(0, 5).join(', ')}${open.length > 5 ? ` and ${open.length - 5} more` : ''}`,
    );
  }
  const parent = t.parent_id ? await taskById(tx.db, t.parent_id) : undefined;
  if (parent?.parent_id && (parent.status === 'pending' || parent.status === 'ready')) {
    return wait(`waiting for parent task ${parent.id} to start`);
  }
  if (t.status === 'pending') return transition(tx, t, { to: 'ready', reason: null, actor: ACTOR });
  return t;
}

/** Dispatch refused for a reason that passes (a spawn limit): stay ready, try again later. */
const TRANSIENT = new Set(['limit_exceeded', 'unavailable']);

class Superseded extends Error {}

export type DispatchOutcome = 'dispatched' | 'superseded' | 'deferred' | 'failed';

/**
 * Spawn the session of a ready task. The spawn and the task's move to running commit in one
 * transaction, under the idempotency key `task:<id>:<attempt>`: a dispatch repeated (by the
 * backstop, another node, a restart) finds the same session and changes nothing.
 */
export async function spawnFor(
  kernel: Kernel,
  tables: Tables,
  t: TasksTable,
  startContext: PluginContext['startContext'] = async () => [],
): Promise<DispatchOutcome> {
  const attempt = Number(t.attempts) + 1;
  try {
    const { spawner, pipe } = await spawnerOf(kernel, tables, t);
    const context = contextOf(
      await startContext({ zone: t.zone, id: t.id, title: t.title, prompt: t.prompt, attempt }),
    );
    const req: SpawnRequest = {
      // A task a session made is its worker; one the operator made leads (it may make its own
      // DAG below it). The template's job, if any, overrides either.
      job: spawner.kind === 'operator' ? 'orchestrator' : 'worker',
      ...spawnRequestOf(parseJson<SpawnTemplate>(t.spawn, {})),
      title: t.title,
      prompt: t.prompt,
      runner: t.environment,
      pipe,
      idempotencyKey: `task:${t.id}:${attempt}`,
      // Its lead hears it as the task ([TASK], report.ts), not as SIGCHLDs of its session.
      reportedBy: REPORTER,
      ...(t.persona_id ? { personaId: t.persona_id } : {}),
      ...(t.budget ? { budget: parseJson<Budget>(t.budget, {}) } : {}),
      ...(context ? { context } : {}),
    };
    const spawned = await tables.write(async (tx) => {
      const r = await kernel.spawnIn(tx, spawner, req);
      const cur = await taskById(tx.db, t.id);
      if (cur?.session_id === r.id) return r; // recorded by the dispatch that made it
      if (cur?.status !== 'ready' || Number(cur.attempts) !== Number(t.attempts)) throw new Superseded();
      await transition(tx, cur, {
        to: 'running',
        reason: null,
        actor: ACTOR,
        patch: { session_id: r.id, attempts: attempt, result: null },
      });
      tx.append({
        zone: t.zone,
        type: 'task.dispatched',
        actor: ACTOR,
        session_id: r.id,
        payload: { task: t.id, session: r.id, attempt },
      });
      return r;
    });
    // The answer waits for the agent to come up (or fail to), as a spawn's does.
    await spawned.started;
    return 'dispatched';
  } catch (error) {
    if (error instanceof Superseded) return 'superseded';
    const e = error instanceof WarrenError ? error : null;
    const message = (error as Error).message;
    return tables.write(async (tx) => {
      const cur = await taskById(tx.db, t.id);
      if (cur?.status !== 'ready' || Number(cur.attempts) !== Number(t.attempts)) return 'superseded';
      if (e && TRANSIENT.has(e.code)) {
        await tx.db
          .updateTable('orchestration_tasks')
          .set({ reason: `waiting to start: ${message}`, updated_at: tx.now })
          .where('id', '=', t.id)
          .execute();
        return 'deferred';
      }
      await finish(tx, kernel, cur, 'failed', { reason: `could not start: ${message}`, actor: ACTOR });
      return 'failed';
    });
  }
}

/**
 * The plugins' start context as one prompt prefix, and what the log keeps of it: a digest
 * (sha256 and byte length of the text) and each part's reference, never the text itself.
 */
function contextOf(parts: StartContextPart[]): SpawnRequest['context'] | undefined {
  if (parts.length === 0) return undefined;
  const text = parts.map((p) => p.text).join('\n\n');
  return {
    text,
    digest: {
      sha256: createHash('sha256').update(text).digest('hex'),
      bytes: Buffer.byteLength(text),
      parts: parts.map((p) => p.ref),
    },
  };
}

/**
 * Who spawns a task's session: its parent task's live session; else, for a task a session
 * created, that session (a session's task never runs with more than its creator holds:
 * spawned by the plugin it would run with an operator's grants); else the plugin, as an
 * operator (a child of init).
 */
async function spawnerOf(
  kernel: Kernel,
  tables: Tables,
  t: TasksTable,
): Promise<{ spawner: Principal; pipe: 'async' | 'detach' }> {
  const asSession = (s: { id: string; zone: string; depth: number }) => ({
    spawner: { kind: 'session', sessionId: s.id, zone: s.zone, depth: s.depth } as Principal,
    pipe: 'async' as const,
  });
  const parent = t.parent_id ? await taskById(tables.reader, t.parent_id) : undefined;
  if (parent?.parent_id && parent.session_id) {
    const s = await kernel.sessionState(parent.session_id);
    if (s && s.status !== 'stopped') return asSession(s);
  }
  if (!isOperatorId(t.created_by) && t.created_by !== 'kernel') {
    const creator = await kernel.sessionState(t.created_by);
    if (!creator || creator.status === 'stopped') {
      throw new WarrenError(
        'forbidden',
        `no live session may spawn it: its parent task has none, and ${t.created_by}, which created it, has stopped`,
      );
    }
    return asSession(creator);
  }
  return { spawner: { kind: 'operator', name: 'orchestration', zone: t.zone }, pipe: 'detach' };
}
