import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  asSession,
  call,
  eventsOf,
  forEachWarren,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';
import {
  create,
  fails,
  listens,
  logOf,
  says,
  saysThenIdles,
  task,
  waitsThenSays,
  waitTask,
} from './helpers.ts';

forEachWarren('tasks: creation and bad input', (t) => {
  it('a task goes under the root, which is made with the zone’s first task and is protected', async () => {
    const w = await t.open();
    const empty = await call(w, 'task_tree', {});
    assert.equal(empty.tree.task.id, 'root');
    assert.deepEqual(empty.tree.children, []);
    const a = await create(w, { title: 'a', hold: true });
    assert.equal(a.parentId, 'root');
    assert.equal(a.status, 'pending');
    assert.match(a.reason, /held/);
    const root = await call(w, 'task_show', { id: 'root' });
    assert.equal(root.task.status, 'running');
    assert.equal(root.task.sessionId, 'init');
    assert.deepEqual(root.children, [a.id]);
    await fails(call(w, 'task_cancel', { id: 'root' }), 'forbidden', /root task/);
    await fails(call(w, 'task_complete', { id: 'root' }), 'forbidden', /root task/);
    await fails(call(w, 'task_delete', { id: 'root' }), 'forbidden', /root task/);
    await fails(call(w, 'task_start', { id: 'root' }), 'forbidden', /root task/);
  });

  it('refuses an unknown dependency by name, and a cycle with the cycle named', async () => {
    const w = await t.open();
    await fails(create(w, { title: 'x', dependsOn: ['task_nope'] }), 'not_found', /task_nope/);
    const a = await create(w, { title: 'a', hold: true });
    const b = await create(w, { title: 'b', hold: true, dependsOn: [a.id] });
    const c = await create(w, { title: 'c', hold: true, dependsOn: [b.id] });
    const e = await fails(call(w, 'task_depend', { id: a.id, dependsOn: [c.id] }), 'dependency_cycle');
    assert.equal(e.message, `dependency cycle: ${a.id} → ${c.id} → ${b.id} → ${a.id}`);
    assert.equal((e as unknown as { status: number }).status, 409);
    await fails(
      call(w, 'task_depend', { id: a.id, dependsOn: [a.id] }),
      'dependency_cycle',
      new RegExp(`${a.id} → ${a.id}`),
    );
    // Nothing was added by the refused calls.
    assert.deepEqual((await call(w, 'task_show', { id: a.id })).dependsOn, []);
    // An acyclic addition is fine.
    const d = await create(w, { title: 'd', hold: true });
    assert.deepEqual(
      (await call(w, 'task_depend', { id: c.id, dependsOn: [d.id] })).dependsOn.sort(),
      [b.id, d.id].sort(),
    );
    // task_list carries each task's dependencies, so a DAG needs no task_show per task.
    const listed = new Map(
      (await call(w, 'task_list', {})).tasks.map((x: { id: string; dependsOn: string[] }) => [
        x.id,
        x.dependsOn,
      ]),
    );
    assert.deepEqual(listed.get(a.id), []);
    assert.deepEqual(listed.get(b.id), [a.id]);
    assert.deepEqual(listed.get(c.id), [b.id, d.id].sort());
    const paged = await call(w, 'task_list', { limit: 1, after: b.id });
    assert.equal(paged.tasks.length, 1);
    assert.deepEqual(paged.tasks[0].dependsOn, listed.get(paged.tasks[0].id));
  });

  it('caps sizes: title, dependencies, prompt; refuses waiting on an ancestor', async () => {
    const w = await t.open({ limits: { promptBytes: 1000 } });
    await fails(create(w, { title: 'x'.repeat(201) }), 'invalid_input');
    await fails(create(w, { title: 'x', prompt: 'p'.repeat(1001) }), 'invalid_input', /prompt is 1001 bytes/);
    const many = Array.from({ length: 101 }, (_, i) => `task_${i}`);
    await fails(create(w, { title: 'x', dependsOn: many }), 'invalid_input');
    const p = await create(w, { title: 'p', hold: true });
    await fails(create(w, { title: 'kid', parent: p.id, dependsOn: [p.id] }), 'invalid_input', /ancestor/);
    const kid = await create(w, { title: 'kid', parent: p.id, hold: true });
    await fails(call(w, 'task_depend', { id: p.id, dependsOn: [kid.id] }), 'invalid_input', /descendant/);
  });

  it('delete refuses a task with children (has_children, 409), then deletes it once they are gone', async () => {
    const w = await t.open();
    const p = await create(w, { title: 'p', hold: true });
    const k = await create(w, { title: 'k', parent: p.id, hold: true });
    const e = await fails(call(w, 'task_delete', { id: p.id }), 'has_children', new RegExp(k.id));
    assert.equal((e as unknown as { status: number }).status, 409);
    await call(w, 'task_delete', { id: k.id });
    await call(w, 'task_delete', { id: p.id });
    await fails(call(w, 'task_show', { id: p.id }), 'not_found');
    const log = await logOf(w, 'task.deleted');
    assert.deepEqual(
      log.map((e) => e.payload.task),
      [k.id, p.id],
    );
  });

  it('a task in an environment that is not connected stays pending and says why', async () => {
    const w = await t.open();
    // One that does not exist is refused; one that exists but has no runner connected waits.
    await fails(create(w, { title: 'nowhere', environment: 'gpu-box' }), 'not_found', /gpu-box/);
    await call(w, 'runner_token_create', { name: 'gpu-box' });
    const a = await create(w, { title: 'remote', environment: 'runner:gpu-box', spawn: says('hi') });
    await until(async () => (await task(w, a.id)).reason === 'environment runner:gpu-box is not connected');
    assert.equal((await task(w, a.id)).status, 'pending');
    assert.equal((await task(w, a.id)).sessionId, null);
  });

  it('with the plugin disabled, the task syscalls are not_found and name the plugin', async () => {
    const w = await t.open({ plugins: { seed: [] } });
    await fails(create(w, { title: 'x' }), 'not_found', /orchestration plugin/);
    await fails(call(w, 'task_list', {}), 'not_found', /warren plugin enable orchestration/);
  });

  it('zones: each has its own root task, and sees only its own tasks', async () => {
    const w = await t.open();
    const z2 = { kind: 'operator' as const, name: 'admin', zone: 'z2' };
    const a = await create(w, { title: 'in z2', hold: true }, z2);
    assert.equal(a.parentId, 'root.z2');
    assert.equal((await call(w, 'task_show', { id: 'root' }, z2)).task.id, 'root.z2');
    await fails(call(w, 'task_show', { id: a.id }), 'not_found');
    await fails(create(w, { title: 'x', dependsOn: [a.id] }), 'not_found', new RegExp(a.id));
    assert.deepEqual((await call(w, 'task_list', {})).tasks, []);
    assert.deepEqual(
      (await call(w, 'task_list', {}, z2)).tasks.map((x: { id: string }) => x.id),
      [a.id, 'root.z2'].sort(),
    );
  });

  it('a session acts only on its own subtree', async () => {
    const w = await t.open();
    const other = await create(w, { title: 'operator’s', hold: true });
    const s = await call(w, 'ipc_spawn', listens);
    const me = asSession(s.session.id);
    // A session's task runs its own runtime (script here): it needs a script of its own.
    const mine = await create(w, { title: 'mine', hold: true, spawn: says('mine') }, me);
    assert.equal(mine.parentId, 'root');
    assert.equal(mine.createdBy, s.session.id);
    await fails(call(w, 'task_show', { id: other.id }, me), 'forbidden', /subtree/);
    await fails(call(w, 'task_cancel', { id: other.id }, me), 'forbidden');
    await fails(create(w, { title: 'x', dependsOn: [other.id], spawn: says('x') }, me), 'forbidden');
    const listed = (await call(w, 'task_list', {}, me)).tasks.map((x: { id: string }) => x.id);
    assert.deepEqual(listed, [mine.id]);
    const all = (await call(w, 'task_list', {})).tasks.map((x: { id: string }) => x.id);
    assert.deepEqual(all, ['root', other.id, mine.id].sort());
  });
});

forEachWarren('tasks: dispatch and status', (t) => {
  it("a session's task never runs with more than the session holds", async () => {
    const w = await t.open();
    const s = await call(w, 'ipc_spawn', listens);
    const me = asSession(s.session.id);
    // A script session may spawn scripts, not commands: nor may a task it makes (refused when
    // it is made, not first at dispatch).
    await fails(
      create(w, { title: 'sneaky', spawn: { runtime: 'command', command: ['true'] } }, me),
      'forbidden',
      /runtimes grant/,
    );
    // Nor one without a script: its default runtime is the session's own, script.
    await fails(create(w, { title: 'empty' }, me), 'invalid_input', /needs a script: give `script`/);
    const ok = await create(w, { title: 'fine', spawn: says('ok') }, me);
    const done = await waitTask(w, ok.id, 'complete');
    assert.equal(
      (await sessionOf(w, done.sessionId)).parentId,
      s.session.id,
      'spawned by the session that made it',
    );
  });

  it('a task with a script that ends saying something completes with that result', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'say done', spawn: says('done') });
    const done = await waitTask(w, a.id, 'complete');
    assert.equal(done.result, 'done');
    assert.equal(done.attempts, 1);
    const s = await sessionOf(w, done.sessionId);
    assert.equal(s.title, 'say done', 'the session carries the task title');
    assert.equal(s.parentId, 'init', "a root task's session is a child of init");
    const log = await logOf(w, 'task.status', 'task.dispatched');
    const mine = log.filter((e) => e.payload.task === a.id);
    assert.deepEqual(
      mine.map((e) =>
        e.type === 'task.dispatched'
          ? `dispatched:${e.payload.attempt}`
          : `${e.payload.from}→${e.payload.to}`,
      ),
      ['pending→ready', 'ready→running', 'dispatched:1', 'running→complete'],
    );
    const dispatched = mine.find((e) => e.type === 'task.dispatched');
    assert.equal(dispatched?.session_id, done.sessionId);
    assert.equal(dispatched?.payload.session, done.sessionId);
  });

  it('an idle session with a result completes its task, and then ends without a model turn', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'idler', spawn: saysThenIdles('result here') });
    const done = await waitTask(w, a.id, 'complete');
    assert.equal(done.result, 'result here');
    await waitStatus(w, done.sessionId, 'stopped');
    const events = await eventsOf(w, done.sessionId);
    const sigterm = events.find((e) => e.type === 'signal' && e.payload.signal === 'SIGTERM');
    assert.ok(sigterm, 'the stop request is in the log');
    assert.equal(sigterm.payload.quiet, true);
    // Nothing reached its input: no [SIGTERM] line, no turn after the one that gave the result.
    assert.deepEqual(
      events.filter((e) => e.type === 'stream.message' || e.type === 'session.input'),
      [],
      'no input: the agent was not asked anything',
    );
    const s = await sessionOf(w, done.sessionId);
    assert.equal(s.endReason, 'terminated');
    assert.equal(s.turns, 1, 'one turn: the one that gave the result');
  });

  it('a crashed session fails its task with the reason', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'crasher', spawn: { script: { steps: [{ exit: 'crashed' }] } } });
    const failed = await waitTask(w, a.id, 'failed');
    assert.match(failed.reason, /^session crashed/);
    const st = (await logOf(w, 'task.status')).find(
      (e) => e.payload.task === a.id && e.payload.to === 'failed',
    );
    assert.match(String(st?.payload.reason), /crashed/);
  });

  it('a bad spawn template is refused when the task is made, saying why', async () => {
    const w = await t.open();
    await fails(
      create(w, { title: 'bad', spawn: { runtime: 'nope' } }),
      'runtime_unavailable',
      /unknown runtime "nope"/,
    );
    assert.deepEqual(
      (await call(w, 'task_list', {})).tasks.map((x: { id: string }) => x.id),
      [],
      'nothing was made',
    );
  });

  it('review: the result waits for task complete, which ends the session', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'reviewed', review: true, spawn: saysThenIdles('draft') });
    const r = await waitTask(w, a.id, 'review');
    assert.equal(r.result, 'draft');
    assert.equal((await sessionOf(w, r.sessionId)).status, 'idle', 'the session waits in review');
    const done = (await call(w, 'task_complete', { id: a.id, result: 'approved draft' })).task;
    assert.equal(done.status, 'complete');
    assert.equal(done.result, 'approved draft');
    await waitStatus(w, r.sessionId, 'stopped');
    await fails(call(w, 'task_complete', { id: a.id }), 'conflict', /complete/);
  });

  it('a task a spawn limit holds back waits ready, and starts when a session of the zone stops', async () => {
    const w = await t.open({ kernel: { limits: { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 2 } } });
    const a = await create(w, { title: 'a', spawn: listens });
    const b = await create(w, { title: 'b', spawn: listens });
    const ar = await waitTask(w, a.id, 'running');
    await waitTask(w, b.id, 'running');
    const c = await create(w, { title: 'c', spawn: says('c ran') });
    const waiting = await until(async () => {
      const x = await task(w, c.id);
      return x.status === 'ready' &&
        /^waiting to start: zone default already has 2 live sessions/.test(x.reason ?? '')
        ? x
        : null;
    });
    assert.equal(waiting.sessionId, null);
    await waitStatus(w, ar.sessionId, 'idle');
    await call(w, 'task_cancel', { id: a.id });
    assert.equal((await waitTask(w, c.id, 'complete')).result, 'c ran');
  });

  it('a held task starts when released; a failed one is retried as a new attempt', async () => {
    const w = await t.open();
    const a = await create(w, {
      title: 'held',
      hold: true,
      spawn: { script: { steps: [{ exit: 'crashed' }] } },
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await task(w, a.id)).sessionId, null);
    await call(w, 'task_start', { id: a.id });
    const f1 = await waitTask(w, a.id, 'failed');
    assert.equal(f1.attempts, 1);
    await call(w, 'task_start', { id: a.id });
    const f2 = await until(async () => {
      const x = await task(w, a.id);
      return x.status === 'failed' && x.attempts === 2 ? x : null;
    });
    assert.notEqual(f2.sessionId, f1.sessionId, 'a new attempt has a new session');
    const keys = await w.store.reader
      .selectFrom('sessions')
      .select('idempotency_key')
      .where('idempotency_key', 'like', `task:${a.id}:%`)
      .orderBy('idempotency_key')
      .execute();
    assert.deepEqual(
      keys.map((k) => k.idempotency_key),
      [`task:${a.id}:1`, `task:${a.id}:2`],
    );
  });

  it('a retry recorded by another part (task.retried, row back to pending) is dispatched as the next attempt', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'retried', spawn: { script: { steps: [{ exit: 'crashed' }] } } });
    await waitTask(w, a.id, 'failed');
    // What the inbox does when an operator answers a failure escalation of a task with no live session.
    await w.store.writer.write(async (tx) => {
      await tx.db
        .updateTable('orchestration_tasks' as never)
        .set({ status: 'pending', held: 0, result: null, reason: null, ended_at: null } as never)
        .where('id' as never, '=', a.id as never)
        .execute();
      tx.append({ zone: 'default', type: 'task.retried', actor: 'operator:admin', payload: { task: a.id } });
    });
    await until(async () => (await task(w, a.id)).attempts === 2);
  });

  it('a dependency that fails leaves its dependents pending, saying so', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'a', spawn: { script: { steps: [{ exit: 'crashed' }] } } });
    const b = await create(w, { title: 'b', dependsOn: [a.id], spawn: says('b') });
    await waitTask(w, a.id, 'failed');
    await until(async () => (await task(w, b.id)).reason === `waiting on failed task ${a.id}`);
    assert.equal((await task(w, b.id)).status, 'pending');
  });

  it('a join that waits on three is dispatched only after all three complete', async () => {
    const w = await t.open();
    const parts: Array<{ id: string }> = [];
    for (const n of ['a', 'b', 'c'])
      parts.push(await create(w, { title: n, spawn: waitsThenSays(`${n} done`) }));
    const join = await create(w, { title: 'join', dependsOn: parts.map((p) => p.id), spawn: says('joined') });
    const running = await Promise.all(parts.map((p) => waitTask(w, p.id, 'running')));
    for (const p of running) await waitStatus(w, p.sessionId, 'idle');
    for (const p of running.slice(0, 2)) await call(w, 'send', { id: p.sessionId, text: 'go' });
    await Promise.all(running.slice(0, 2).map((p) => waitTask(w, p.id, 'complete')));
    await w.kernel.reconcile();
    const j = await task(w, join.id);
    assert.equal(j.status, 'pending');
    assert.equal(j.sessionId, null);
    assert.equal(j.reason, `waiting on ${running[2].id}`);
    await call(w, 'send', { id: running[2].sessionId, text: 'go' });
    const jd = await waitTask(w, join.id, 'complete');
    assert.equal(jd.result, 'joined');
    const log = await logOf(w, 'task.status', 'task.dispatched');
    const completed = log.filter(
      (e) => e.payload.to === 'complete' && parts.some((p) => p.id === e.payload.task),
    );
    const dispatched = log.find((e) => e.type === 'task.dispatched' && e.payload.task === join.id);
    assert.equal(completed.length, 3);
    assert.ok(
      dispatched && completed.every((c) => c.seq < dispatched.seq),
      'the join was dispatched after all three completed',
    );
  });
});

forEachWarren('tasks: the task tree and signals', (t) => {
  it("a child task's session is spawned by the parent task's session, joined by an async pipe, and its outcome reaches the parent as one [TASK] line", async () => {
    const w = await t.open();
    const p = await create(w, { title: 'parent', spawn: listens });
    const pr = await waitTask(w, p.id, 'running');
    const c = await create(w, { title: 'the child task', parent: p.id, spawn: says('child result') });
    const cd = await waitTask(w, c.id, 'complete');
    const child = await sessionOf(w, cd.sessionId);
    assert.equal(child.parentId, pr.sessionId);
    const fds = await w.kernel.listFds({ kind: 'operator', name: 'admin', zone: 'default' }, pr.sessionId);
    const pipe = fds.find((f) => f.streamName === `pipe:${cd.sessionId}`);
    assert.ok(pipe, "the parent task's session holds the child's pipe");
    assert.equal(pipe.deliveryMode, 'async');
    const notice = await until(async () =>
      (await eventsOf(w, pr.sessionId)).find((e) => e.type === 'signal' && e.payload.signal === 'TASK'),
    );
    assert.equal(notice.payload.task, c.id);
    assert.equal(notice.payload.status, 'complete');
    assert.equal(notice.payload.text, 'child result');
    const msg = await until(async () =>
      (await eventsOf(w, pr.sessionId)).find(
        (e) => e.type === 'stream.message' && String(e.payload.text).startsWith('[TASK]'),
      ),
    );
    assert.equal(msg.payload.text, `[TASK] ${c.id} "the child task" complete: child result`);
    // Its child's session, stopped, sent the parent no SIGCHLD at all: the [TASK] line replaces them.
    await waitStatus(w, cd.sessionId, 'stopped');
    const events = await eventsOf(w, pr.sessionId);
    assert.deepEqual(
      events.filter((e) => e.type === 'signal').map((e) => e.payload.signal),
      ['TASK'],
      'one [TASK], no SIGCHLD',
    );
  });

  it('a task whose session idles with a result waits while a child task is open', async () => {
    const w = await t.open();
    const p = await create(w, { title: 'waiting parent', hold: true, spawn: saysThenIdles('summary') });
    const k = await create(w, { title: 'open child', parent: p.id, hold: true });
    await call(w, 'task_start', { id: p.id });
    const pr = await waitTask(w, p.id, 'running');
    await waitStatus(w, pr.sessionId, 'idle');
    await w.kernel.reconcile();
    assert.equal((await task(w, p.id)).status, 'running', 'not complete while its child is open');
    await call(w, 'task_cancel', { id: k.id });
    const done = await waitTask(w, p.id, 'complete');
    assert.equal(done.result, 'summary');
  });

  it('a session creating a task without a parent puts it under its own task', async () => {
    const w = await t.open();
    const p = await create(w, { title: 'orchestrator', spawn: listens });
    const pr = await waitTask(w, p.id, 'running');
    const mine = await create(w, { title: 'sub', spawn: says('ok') }, asSession(pr.sessionId));
    assert.equal(mine.parentId, p.id);
    const listed = (await call(w, 'task_list', {}, asSession(pr.sessionId))).tasks.map(
      (x: { id: string }) => x.id,
    );
    assert.deepEqual(listed.sort(), [p.id, mine.id].sort());
  });

  it('cancel sends SIGTERM and cancels the task and the open tasks below it', async () => {
    const w = await t.open();
    const p = await create(w, { title: 'p', spawn: listens });
    const pr = await waitTask(w, p.id, 'running');
    const k = await create(w, { title: 'k', parent: p.id, spawn: listens });
    const kr = await waitTask(w, k.id, 'running');
    // Agents that are up (a session still starting cannot be asked: it would get SIGKILL).
    await waitStatus(w, pr.sessionId, 'idle');
    await waitStatus(w, kr.sessionId, 'idle');
    const r = await call(w, 'task_cancel', { id: p.id });
    assert.deepEqual(r.cancelled, [p.id, k.id]);
    assert.equal((await task(w, p.id)).status, 'cancelled');
    assert.equal((await task(w, k.id)).status, 'cancelled');
    for (const id of [pr.sessionId, kr.sessionId]) {
      const sig = (await eventsOf(w, id)).find((e) => e.type === 'signal' && e.payload.signal === 'SIGTERM');
      assert.ok(sig, `${id} got SIGTERM`);
      await waitStatus(w, id, 'stopped');
    }
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await task(w, p.id)).status, 'cancelled', 'a cancelled task stays cancelled');
  });

  it('a task whose parent completes is adopted by its grandparent, with [ADOPTED] and task.adopted', async () => {
    const w = await t.open();
    const g = await create(w, { title: 'grandparent', spawn: listens });
    const gr = await waitTask(w, g.id, 'running');
    const p = await create(w, { title: 'parent', parent: g.id, spawn: listens });
    await waitTask(w, p.id, 'running');
    const c = await create(w, { title: 'orphan-to-be', parent: p.id, spawn: listens });
    await waitTask(w, c.id, 'running');
    await call(w, 'task_complete', { id: p.id, result: 'parent done' });
    const moved = await task(w, c.id);
    assert.equal(moved.parentId, g.id);
    assert.equal(moved.status, 'running');
    const adopted = (await logOf(w, 'task.adopted')).find((e) => e.payload.task === c.id);
    assert.deepEqual(adopted?.payload, { task: c.id, from: p.id, to: g.id, reason: 'parent complete' });
    const msg = await until(async () =>
      (await eventsOf(w, gr.sessionId)).find(
        (e) =>
          e.type === 'stream.message' && String(e.payload.text).startsWith(`[ADOPTED] You adopted ${c.id}`),
      ),
    );
    assert.match(String(msg.payload.text), /"orphan-to-be": its parent .* ended \(complete\)\.$/);
  });

  it('the orphan-reparent phase repairs a parent finished behind the plugin’s back', async () => {
    const w = await t.open();
    const p = await create(w, { title: 'p', hold: true });
    const c = await create(w, { title: 'c', parent: p.id, hold: true });
    await w.store.writer.write(async (tx) => {
      await tx.db
        .updateTable('orchestration_tasks' as never)
        .set({ status: 'failed' } as never)
        .where('id' as never, '=', p.id as never)
        .execute();
    });
    await w.kernel.reconcile();
    assert.equal((await task(w, c.id)).parentId, 'root');
    const adopted = (await logOf(w, 'task.adopted')).find((e) => e.payload.task === c.id);
    assert.equal(adopted?.payload.to, 'root');
  });

  it('the follow phase repairs a task out of step with its session', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'drifted', spawn: says('fine') });
    const done = await waitTask(w, a.id, 'complete');
    // As if the event path had missed the session's end: the row still says running.
    await w.store.writer.write(async (tx) => {
      await tx.db
        .updateTable('orchestration_tasks' as never)
        .set({ status: 'running', result: null, ended_at: null } as never)
        .where('id' as never, '=', a.id as never)
        .execute();
    });
    await w.kernel.reconcile();
    const fixed = await task(w, a.id);
    assert.equal(fixed.status, 'complete');
    assert.equal(fixed.result, 'fine');
    assert.equal(fixed.sessionId, done.sessionId);
  });

  it('a lost row update is not a second session: dispatch finds the session its key made', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'once', hold: true, spawn: listens });
    // The spawn of attempt 1 committed, the task row never heard of it (the crash window a
    // dispatch without one transaction would have): the same key finds the same session.
    const first = await w.kernel.spawn(
      { kind: 'operator', name: 'orchestration', zone: 'default' },
      { runtime: 'script', config: listens, title: 'once', idempotencyKey: `task:${a.id}:1` },
    );
    await call(w, 'task_start', { id: a.id });
    const r = await waitTask(w, a.id, 'running');
    assert.equal(r.sessionId, first.session.id);
    await fails(call(w, 'task_start', { id: a.id }), 'conflict', /running/);
    assert.equal(r.attempts, 1);
    const n = await w.store.reader
      .selectFrom('sessions')
      .select('id')
      .where('idempotency_key', 'like', `task:${a.id}:%`)
      .execute();
    assert.equal(n.length, 1);
    await w.kernel.reconcile();
    assert.equal((await task(w, a.id)).sessionId, first.session.id);
  });

  it('task tree nests the tree; task show has dependencies, children and the session', async () => {
    const w = await t.open();
    const p = await create(w, { title: 'p', hold: true });
    const a = await create(w, { title: 'a', parent: p.id, hold: true });
    const b = await create(w, { title: 'b', parent: p.id, hold: true, dependsOn: [a.id] });
    const tree = (await call(w, 'task_tree', {})).tree;
    assert.equal(tree.task.id, 'root');
    assert.deepEqual(
      tree.children.map((n: { task: { id: string } }) => n.task.id),
      [p.id],
    );
    assert.deepEqual(
      tree.children[0].children.map((n: { task: { id: string } }) => n.task.id),
      [a.id, b.id],
    );
    const shown = await call(w, 'task_show', { id: b.id });
    assert.deepEqual(shown.dependsOn, [a.id]);
    assert.equal(shown.session, null);
    assert.deepEqual((await call(w, 'task_show', { id: p.id })).children, [a.id, b.id]);
    const page = await call(w, 'task_list', { limit: 2 });
    assert.equal(page.tasks.length, 2);
    const rest = await call(w, 'task_list', { after: page.next });
    assert.equal(rest.tasks.length, 2);
  });
});
