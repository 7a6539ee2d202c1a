import type { Kernel } from '../../kernel/kernel.ts';
import type { Budget } from '../../kernel/types.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import { ownTask, requireActOn } from './access.ts';
import { checkDeps } from './dag.ts';
import { withdrawEscalations } from './escalations.ts';
import { finish } from './follow.ts';
import { TASK_DONE, type Tables, type TasksTable, type Tx } from './schema.ts';
import { depsOf, ensureRoot, isDone, isRootId, rootIdOf, taskById, taskInZone, transition } from './tasks.ts';
import { MAX_TEMPLATE_BYTES, type SpawnTemplate, spawnRequestOf } from './template.ts';

/** What operators and orchestrator sessions do to tasks: create, depend, start, complete, cancel, delete. */

export interface NewTask {
  title: string;
  prompt: string;
  parent?: string | undefined;
  dependsOn?: string[] | undefined;
  personaId?: string | undefined;
  environment?: string | undefined;
  spawn?: SpawnTemplate | undefined;
  budget?: Budget | undefined;
  review?: boolean | undefined;
  onFailure?: 'fail' | 'escalate' | undefined;
  hold?: boolean | undefined;
}

const conflict = (message: string, details?: Record<string, unknown>) =>
  new WarrenError('conflict', message, details);

/** The root task is the tree's init: it is never completed, cancelled, started or deleted. */
function notRoot(t: TasksTable, what: string): void {
  if (isRootId(t.id)) throw new WarrenError('forbidden', `the root task cannot be ${what}`);
}

/** A task of the caller's zone that the caller may act on. */
async function target(tx: Tx, p: Principal, ref: string, what: string): Promise<TasksTable> {
  const t = await taskInZone(tx.db, p.zone, ref);
  await requireActOn(tx.db, p, t, what);
  return t;
}

export async function createTask(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  n: NewTask,
): Promise<{ task: TasksTable; dependsOn: string[] }> {
  const spawn = JSON.stringify(n.spawn ?? {});
  if (spawn.length > MAX_TEMPLATE_BYTES) {
    throw new WarrenError(
      'invalid_input',
      `spawn is ${spawn.length} bytes; the limit is ${MAX_TEMPLATE_BYTES}`,
    );
  }
  // Without an environment of its own, a task runs where its persona says (else locally).
  const environment =
    n.environment ??
    (n.personaId !== undefined
      ? await kernel
          .personaShow(p, n.personaId)
          .then((persona) => persona.environmentId)
          .catch(() => undefined)
      : undefined) ??
    'local';
  // An environment that does not exist is an error now; one that is offline is waited for.
  kernel.checkEnvironment(environment);
  // A spawn that cannot start is refused now, not first at dispatch: a session's task runs
  // its own runtime unless it names one. An operator's task with no template at all is
  // checked at dispatch (a held placeholder often gets its spawn later), and so is one for
  // another environment (its runtimes are the runner's, known once it is connected).
  if (
    environment === 'local' &&
    (p.kind === 'session' || n.spawn !== undefined || n.personaId !== undefined)
  ) {
    await kernel.checkSpawn(p, {
      ...spawnRequestOf(n.spawn ?? {}),
      ...(n.personaId !== undefined ? { personaId: n.personaId } : {}),
    });
  }
  return tables.write(async (tx) => {
    await ensureRoot(tx, p.zone);
    const actor = principalId(p);
    let parent: TasksTable;
    if (n.parent !== undefined) {
      parent = await taskInZone(tx.db, p.zone, n.parent);
      if (!isRootId(parent.id)) await requireActOn(tx.db, p, parent, 'create tasks under');
    } else {
      const own = p.kind === 'session' ? await ownTask(tx.db, p.sessionId) : undefined;
      parent = own && own.zone === p.zone ? own : await taskInZone(tx.db, p.zone, rootIdOf(p.zone));
    }
    if (isDone(parent.status)) {
      throw conflict(`task ${parent.id} is ${parent.status}: new tasks go under a task that is not done`, {
        parent: parent.id,
      });
    }
    const id = kernel.ids.id('task');
    const deps = await checkDeps(tx.db, p.zone, id, n.dependsOn ?? [], parent.id);
    if (p.kind === 'session') {
      for (const d of deps) await target(tx, p, d, 'depend on');
    }
    const row: TasksTable = {
      id,
      zone: p.zone,
      parent_id: parent.id,
      title: n.title,
      prompt: n.prompt,
      persona_id: n.personaId ?? null,
      environment,
      spawn,
      budget: n.budget ? JSON.stringify(n.budget) : null,
      review: n.review ? 1 : 0,
      on_failure: n.onFailure ?? 'fail',
      held: n.hold ? 1 : 0,
      status: 'pending',
      session_id: null,
      result: null,
      reason: n.hold ? 'held: task start releases it' : null,
      attempts: 0,
      created_by: actor,
      created_at: tx.now,
      updated_at: tx.now,
      ended_at: null,
    };
    await tx.db.insertInto('orchestration_tasks').values(row).execute();
    if (deps.length > 0) {
      await tx.db
        .insertInto('orchestration_task_deps')
        .values(deps.map((d) => ({ task_id: id, depends_on: d })))
        .execute();
    }
    tx.append({
      zone: p.zone,
      type: 'task.created',
      actor,
      session_id: p.kind === 'session' ? p.sessionId : null,
      payload: {
        task: id,
        title: n.title,
        parent: parent.id,
        dependsOn: deps,
        held: row.held === 1,
        review: row.review === 1,
        onFailure: row.on_failure,
        environment: row.environment,
        ...(row.persona_id ? { personaId: row.persona_id } : {}),
      },
    });
    return { task: row, dependsOn: deps };
  });
}

/** Add dependencies to a task that has not started; a cycle is refused, named. */
export async function addDeps(tables: Tables, p: Principal, ref: string, dependsOn: string[]) {
  return tables.write(async (tx) => {
    const t = await target(tx, p, ref, 'change');
    notRoot(t, 'given dependencies');
    if (t.status !== 'pending' && t.status !== 'ready') {
      throw conflict(`task ${t.id} is ${t.status}: dependencies are added before it starts`);
    }
    const have = await depsOf(tx.db, t.id);
    const deps = await checkDeps(tx.db, p.zone, t.id, [...have, ...dependsOn]);
    const added = deps.filter((d) => !have.includes(d));
    if (p.kind === 'session') for (const d of added) await target(tx, p, d, 'depend on');
    await checkNotDescendants(tx, t.id, added);
    if (added.length > 0) {
      await tx.db
        .insertInto('orchestration_task_deps')
        .values(added.map((d) => ({ task_id: t.id, depends_on: d })))
        .execute();
      tx.append({
        zone: t.zone,
        type: 'task.depends',
        actor: principalId(p),
        payload: { task: t.id, added },
      });
    }
    return { task: (await taskById(tx.db, t.id)) as TasksTable, dependsOn: deps };
  });
}

/**
 * A task may not wait on one of its own descendants: they start only once it has (they are
 * spawned by its session), so it would wait forever.
 */
async function checkNotDescendants(tx: Tx, id: string, deps: string[]): Promise<void> {
  let frontier = [id];
  let seen = 0;
  while (frontier.length > 0 && seen < 20_000) {
    const kids = await tx.db
      .selectFrom('orchestration_tasks')
      .select('id')
      .where('parent_id', 'in', frontier)
      .execute();
    frontier = kids.map((k) => k.id);
    seen += frontier.length;
    const hit = frontier.find((k) => deps.includes(k));
    if (hit) throw new WarrenError('invalid_input', `${id} cannot depend on its own descendant ${hit}`);
  }
}

/**
 * Release a held task, or retry a failed or cancelled one (a new attempt: a new session).
 * Anything else is a conflict.
 */
export async function startTask(tables: Tables, p: Principal, ref: string): Promise<TasksTable> {
  return tables.write(async (tx) => {
    const t = await target(tx, p, ref, 'start');
    notRoot(t, 'started');
    const actor = principalId(p);
    if (t.status === 'failed' || t.status === 'cancelled') {
      return transition(tx, t, {
        to: 'pending',
        reason: null,
        result: null,
        actor,
        patch: { held: 0 },
      });
    }
    if ((t.status === 'pending' || t.status === 'ready') && t.held === 1) {
      await tx.db
        .updateTable('orchestration_tasks')
        .set({ held: 0, reason: null, updated_at: tx.now })
        .where('id', '=', t.id)
        .execute();
      tx.append({ zone: t.zone, type: 'task.released', actor, session_id: null, payload: { task: t.id } });
      return { ...t, held: 0, reason: null };
    }
    throw conflict(
      `task ${t.id} is ${t.status}${t.held ? ' (held)' : ''}: only a held, failed or cancelled task can be started`,
    );
  });
}

/**
 * Complete a task that runs or waits in review (an operator, its parent task's session, or
 * its own): its session is asked to stop, its open children move up.
 */
export async function completeTask(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  ref: string,
  result?: string,
): Promise<TasksTable> {
  return tables.write(async (tx) => {
    const t = await taskInZone(tx.db, p.zone, ref);
    notRoot(t, 'completed');
    // Its own session may complete it too (it is in its own subtree).
    await requireActOn(tx.db, p, t, 'complete');
    // Its own session cannot end the wait its escalation holds it in: only an answer does (or
    // an operator or its lead deciding to complete it anyway).
    if (t.status === 'waiting' && p.kind === 'session' && p.sessionId === t.session_id) {
      throw conflict(
        `task ${t.id} is waiting on the operator's answer to its escalation: it completes after that answer`,
      );
    }
    if (t.status !== 'running' && t.status !== 'review' && t.status !== 'waiting') {
      throw conflict(
        `task ${t.id} is ${t.status}: only a running task, one waiting on the operator or one in review can be completed`,
      );
    }
    let value = result;
    if (value === undefined) {
      const s = t.session_id ? await kernel.sessionStateIn(tx, t.session_id) : undefined;
      value = t.result ?? s?.lastMessage ?? undefined;
    }
    return finish(tx, kernel, t, 'complete', {
      actor: principalId(p),
      ...(value !== undefined ? { result: value } : {}),
    });
  });
}

/**
 * Cancel a task and every open task below it: each is marked cancelled and its live session
 * gets SIGTERM (over its pipe: the kernel's grace, then SIGKILL), in one transaction.
 */
export async function cancelTask(kernel: Kernel, tables: Tables, p: Principal, ref: string, reason?: string) {
  return tables.write(async (tx) => {
    const t = await target(tx, p, ref, 'cancel');
    notRoot(t, 'cancelled');
    if (isDone(t.status)) throw conflict(`task ${t.id} is already ${t.status}`);
    const actor = principalId(p);
    const cancelled: string[] = [];
    const because = reason ?? `cancelled by ${actor}`;
    // Breadth first down the tree; done tasks stay as they are (their open children were handed up).
    let frontier: TasksTable[] = [t];
    while (frontier.length > 0) {
      for (const x of frontier) {
        if (isDone(x.status)) continue;
        await finish(tx, kernel, x, 'cancelled', {
          actor,
          reason: x.id === t.id ? because : `its ancestor ${t.id} was cancelled`,
        });
        cancelled.push(x.id);
      }
      frontier = await tx.db
        .selectFrom('orchestration_tasks')
        .selectAll()
        .where(
          'parent_id',
          'in',
          frontier.map((x) => x.id),
        )
        .where('status', 'not in', TASK_DONE)
        .execute();
    }
    return { task: (await taskById(tx.db, t.id)) as TasksTable, cancelled };
  });
}

/** Delete a task: never the root, never one with children, one that runs, or one an open task waits on. */
export async function deleteTask(tables: Tables, p: Principal, ref: string): Promise<{ id: string }> {
  return tables.write(async (tx) => {
    const t = await target(tx, p, ref, 'delete');
    notRoot(t, 'deleted');
    const kids = await tx.db
      .selectFrom('orchestration_tasks')
      .select('id')
      .where('parent_id', '=', t.id)
      .limit(5)
      .execute();
    if (kids.length > 0) {
      throw new WarrenError(
        'has_children',
        `task ${t.id} still has children (${kids.map((k) => k.id).join(', ')})`,
        {
          task: t.id,
          children: kids.map((k) => k.id),
        },
      );
    }
    if (t.status === 'running' || t.status === 'review' || t.status === 'waiting') {
      throw conflict(`task ${t.id} is ${t.status}: cancel or complete it first`);
    }
    const waiting = await tx.db
      .selectFrom('orchestration_task_deps')
      .innerJoin('orchestration_tasks', 'orchestration_tasks.id', 'orchestration_task_deps.task_id')
      .select('orchestration_tasks.id')
      .where('orchestration_task_deps.depends_on', '=', t.id)
      .where('orchestration_tasks.status', 'in', ['pending', 'ready'])
      .limit(5)
      .execute();
    if (waiting.length > 0) {
      throw conflict(`task ${t.id} is a dependency of ${waiting.map((w) => w.id).join(', ')}`);
    }
    await withdrawEscalations(tx, t, principalId(p), 'the task was deleted');
    await tx.db.deleteFrom('orchestration_task_attachments').where('task_id', '=', t.id).execute();
    await tx.db.deleteFrom('orchestration_task_deps').where('task_id', '=', t.id).execute();
    await tx.db.deleteFrom('orchestration_task_deps').where('depends_on', '=', t.id).execute();
    await tx.db.deleteFrom('orchestration_tasks').where('id', '=', t.id).execute();
    tx.append({
      zone: t.zone,
      type: 'task.deleted',
      actor: principalId(p),
      session_id: null,
      payload: { task: t.id },
    });
    return { id: t.id };
  });
}
