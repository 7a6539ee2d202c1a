import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Warren } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';
import { disableWithDependants } from '../helpers/plugins.ts';
import { call, eventsOf, forEachWarren, idleScript, outputs, until } from '../helpers/warrens.ts';
import { type LiveServer, liveServer } from './live-server.ts';
import { insertTask, simulateDispatch } from './task-rows.ts';

/** An agent that says back every input it gets. */
const echo = { steps: [{ listen: { say: 'got ${input.text}' } }] };

const spawn = async (w: Warren, script: object = idleScript): Promise<string> =>
  (await call(w, 'ipc_spawn', { script })).session.id;

/** The rooms a session holds fds on now. */
const roomsOf = async (w: Warren, session: string): Promise<string[]> =>
  (await call(w, 'streams_attachments', { session })).fds
    .map((f: { streamName: string }) => f.streamName)
    .sort();

const holds = (w: Warren, session: string, room: string) =>
  until(async () => (await roomsOf(w, session)).includes(room), 20_000, `${session} to hold ${room}`);

forEachWarren('task-keyed room attachment', (t) => {
  it('attach, attachments and detach take a task id: its latest live session', async () => {
    const w = await t.open();
    await call(w, 'streams_create', { name: 'planning' });
    const session = await spawn(w);
    const task = await insertTask(w, { session_id: session });

    const att = await call(w, 'streams_attach', { session: task, stream: 'planning', permission: 'r' });
    assert.deepEqual(
      [att.target, att.session, att.stream, att.created, att.durable],
      [task, session, 'planning', true, false],
    );
    assert.deepEqual(await roomsOf(w, session), ['planning']);

    const listed = await call(w, 'streams_attachments', { session: task });
    assert.equal(listed.session, session);
    assert.deepEqual(
      listed.fds.map((f: { streamName: string; permission: string; durable: boolean }) => [
        f.streamName,
        f.permission,
        f.durable,
      ]),
      [['planning', 'r', false]],
    );
    assert.deepEqual(listed.durable, []);

    const det = await call(w, 'streams_detach', { session: task, stream: 'planning' });
    assert.deepEqual([det.session, det.detached, det.durable], [session, 1, false]);
    assert.deepEqual(await roomsOf(w, session), []);

    // Its session gone, a task id names nothing to attach now.
    await call(w, 'kill', { id: session });
    await assert.rejects(
      call(w, 'streams_attach', { session: task, stream: 'planning' }),
      (e: Error & { code: string }) => {
        assert.equal(e.code, 'not_found');
        assert.match(e.message, /no live session.*--durable/);
        return true;
      },
    );
    await assert.rejects(call(w, 'streams_attach', { session: 'task_nope', stream: 'planning' }), {
      code: 'not_found',
    });
  });

  it('a durable attachment made before the task starts is applied when it is dispatched', async () => {
    const w = await t.open();
    const room = await call(w, 'streams_create', { name: 'war-room' });
    const task = await insertTask(w);

    const pre = await call(w, 'streams_attach', {
      session: task,
      stream: 'war-room',
      mode: 'async',
      durable: true,
    });
    assert.deepEqual([pre.session, pre.fd, pre.durable], [null, null, true]);
    const before = await call(w, 'streams_attachments', { session: task });
    assert.equal(before.session, null);
    assert.deepEqual(
      before.durable.map(
        (d: {
          streamName: string;
          permission: string;
          mode: string;
          applied: boolean;
          createdBy: string;
        }) => [d.streamName, d.permission, d.mode, d.applied, d.createdBy],
      ),
      [['war-room', 'rw', 'async', false, 'operator:admin']],
    );
    const kept = (await call(w, 'events', { type: 'task.room_attached' })).events;
    assert.equal(kept.length, 1);
    assert.equal(kept[0].payload.task, task);

    const session = await spawn(w, echo);
    await simulateDispatch(w, task, session);
    await holds(w, session, 'war-room');
    const opened = (await eventsOf(w, session)).find(
      (e) => e.type === 'fd.opened' && e.stream_id === room.stream.id,
    );
    assert.ok(opened, 'the fd was opened in the log');

    // It is a real subscription: a message in the room reaches the agent.
    await call(w, 'ipc_write', { fd: room.fd, message: 'standup in five' });
    await until(
      async () => (await outputs(w, session)).some((o) => o.includes('standup in five')),
      5000,
      'delivery',
    );

    const after = await call(w, 'streams_attachments', { session: task });
    assert.equal(after.session, session);
    assert.equal(after.durable[0].applied, true);
    assert.equal(after.fds[0].durable, true);
  });

  it('a durable attachment follows the task to each new session, across a restart', async () => {
    const location = t.location();
    const w = await t.open({ location });
    await call(w, 'streams_create', { name: 'ops' });
    const first = await spawn(w);
    const task = await insertTask(w, { session_id: first });
    const att = await call(w, 'streams_attach', {
      session: task,
      stream: 'ops',
      durable: true,
      permission: 'r',
      mode: 'detach',
    });
    assert.deepEqual([att.session, att.created, att.durable], [first, true, true]);
    await call(w, 'kill', { id: first });
    await w.close();

    const again = await t.open({ location });
    const second = await spawn(again);
    await simulateDispatch(again, task, second);
    await holds(again, second, 'ops');
    const fd = (await call(again, 'streams_attachments', { session: second })).fds[0];
    assert.deepEqual([fd.permission, fd.deliveryMode], ['r', 'detach']);
  });

  it('after a restart the reconcile phase applies what was missed', async () => {
    const location = t.location();
    const w = await t.open({ location });
    await call(w, 'streams_create', { name: 'ops' });
    const task = await insertTask(w);
    await call(w, 'streams_attach', { session: task, stream: 'ops', durable: true });
    // The plugin is off for one run: a dispatch happens with nobody there to apply it.
    const disabled = await disableWithDependants(w, 'orchestration');
    await w.close();
    const off = await t.open({ location });
    assert.equal(off.plugins.has('orchestration'), false);
    const session = await spawn(off);
    await simulateDispatch(off, task, session);
    for (const name of disabled.reverse()) await call(off, 'plugin_enable', { name });
    await off.close();

    const on = await t.open({ location });
    assert.deepEqual(await roomsOf(on, session), [], 'nothing applied it yet');
    await on.kernel.reconcile();
    assert.deepEqual(await roomsOf(on, session), ['ops']);
  });

  it('after its first run, the reconcile phase looks only at tasks dispatched since', async () => {
    const w = await t.open();
    await call(w, 'streams_create', { name: 'a' });
    const s1 = await spawn(w);
    const old = await insertTask(w, { session_id: s1 });
    await call(w, 'streams_attach', { session: old, stream: 'a', durable: true });
    await w.kernel.reconcile();
    await call(w, 'streams_detach', { session: s1, stream: 'a' });
    await w.kernel.reconcile();
    assert.deepEqual(await roomsOf(w, s1), [], 'an old task is not looked at again');

    const fresh = await insertTask(w);
    await call(w, 'streams_attach', { session: fresh, stream: 'a', durable: true });
    const s2 = await spawn(w);
    await simulateDispatch(w, fresh, s2);
    await holds(w, s2, 'a');
    await call(w, 'streams_detach', { session: s2, stream: 'a' });
    await w.kernel.reconcile();
    assert.deepEqual(await roomsOf(w, s2), ['a'], 'a task dispatched since is repaired');
  });

  it('detaching the task forgets its durable attachment', async () => {
    const w = await t.open();
    await call(w, 'streams_create', { name: 'keep' });
    await call(w, 'streams_create', { name: 'drop' });
    const first = await spawn(w);
    const task = await insertTask(w, { session_id: first });
    await call(w, 'streams_attach', { session: task, stream: 'keep', durable: true });
    await call(w, 'streams_attach', { session: task, stream: 'drop', durable: true });
    assert.deepEqual(await roomsOf(w, first), ['drop', 'keep']);

    const det = await call(w, 'streams_detach', { session: task, stream: 'drop' });
    assert.deepEqual([det.session, det.detached, det.durable], [first, 1, true]);
    assert.deepEqual(
      (await call(w, 'streams_attachments', { session: task })).durable.map(
        (d: { streamName: string }) => d.streamName,
      ),
      ['keep'],
    );
    assert.equal((await call(w, 'events', { type: 'task.room_detached' })).events[0].payload.task, task);

    const second = await spawn(w);
    await simulateDispatch(w, task, second);
    await holds(w, second, 'keep');
    await w.kernel.reconcile();
    assert.deepEqual(await roomsOf(w, second), ['keep'], 'the forgotten one is not re-applied');
  });

  it('--durable needs a task id; a closed room is forgotten; zones do not mix', async () => {
    const w = await t.open();
    await call(w, 'streams_create', { name: 'r' });
    const session = await spawn(w);
    await assert.rejects(
      call(w, 'streams_attach', { session, stream: 'r', durable: true }),
      (e: Error & { code: string }) => {
        assert.equal(e.code, 'invalid_input');
        assert.match(e.message, /--durable needs a task id; ses_\S+ is not one/);
        return true;
      },
    );
    const task = await insertTask(w);
    await assert.rejects(call(w, 'streams_attach', { session: task, stream: 'pipe:x', durable: true }), {
      code: 'reserved_name',
    });
    const stranger = operator('eve', 'other');
    await assert.rejects(call(w, 'streams_attach', { session: task, stream: 'r', durable: true }, stranger), {
      code: 'not_found',
    });
    await assert.rejects(call(w, 'streams_attachments', { session: task }, stranger), { code: 'not_found' });

    await call(w, 'streams_attach', { session: task, stream: 'r', durable: true });
    await call(w, 'streams_close', { stream: 'r', force: true });
    assert.deepEqual((await call(w, 'streams_attachments', { session: task })).durable.length, 1);
    const next = await spawn(w);
    await simulateDispatch(w, task, next);
    await until(
      async () => (await call(w, 'streams_attachments', { session: task })).durable.length === 0,
      5000,
      'the closed room to be forgotten',
    );
    const dropped = (await call(w, 'events', { type: 'task.room_detached' })).events[0];
    assert.deepEqual([dropped.actor, dropped.payload.reason], ['kernel', 'room closed']);
  });

  it('without the orchestration plugin, --durable says which plugin keeps durable attachments', async () => {
    const w = await t.open({ plugins: { seed: [] } });
    assert.equal(w.plugins.has('orchestration'), false);
    await call(w, 'streams_create', { name: 'r' });
    await assert.rejects(
      call(w, 'streams_attach', { session: 'task_01abc', stream: 'r', durable: true }),
      (e: Error & { code: string }) => {
        assert.equal(e.code, 'invalid_input');
        assert.match(
          e.message,
          /no loaded plugin keeps any: the orchestration plugin keeps them for a task id \(warren plugin enable orchestration, then restart\)/,
        );
        return true;
      },
    );
    // Plain session attachments are untouched.
    const session = await spawn(w);
    assert.equal((await call(w, 'streams_attach', { session, stream: 'r' })).created, true);
  });
});

describe('warren streams attach --durable through the real CLI against a real server', () => {
  let live: LiveServer;
  before(async () => {
    live = await liveServer();
  });
  after(async () => {
    await live?.stop();
  });

  it('pre-wire a task, attach its live session, list both, detach the task', async () => {
    await live.ok('streams', 'create', 'ops');
    const waiting = 'task_01cliwait00000000000000';
    live.insertTask({ id: waiting, title: 'later', session_id: null, status: 'pending' });
    assert.equal(
      await live.ok('streams', 'attach', waiting, 'ops', '--durable'),
      `kept for ${waiting} across its sessions; ${waiting} has no live session yet: attached when it gets one\n`,
    );
    const pending = await live.ok('streams', 'attachments', waiting);
    assert.match(pending, new RegExp(`${waiting} has no live session`));
    assert.match(
      pending,
      /Durable \(task\)\s+Perm\s+Mode\s+Applied\s+By\n\s*ops\s+rw\s+async\s+waiting\s+operator:/,
    );

    const spawned = await live.server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      script: { steps: [{ listen: {} }] },
    });
    const session = spawned.json.session.id;
    const task = 'task_01clilive00000000000000';
    live.insertTask({ id: task, title: 'now', session_id: session, status: 'running' });
    assert.match(
      await live.ok('streams', 'attach', task, 'ops', '--durable', '--perm', 'r'),
      new RegExp(
        `^kept for ${task} across its sessions; attached ${task} \\(${session}\\) to ops as fd \\d+\n$`,
      ),
    );
    const both = await live.ok('streams', 'attachments', task);
    assert.match(both, /^FD\s+Stream\s+Perm/);
    assert.match(both, /ops\s+r\s+async\s+yes\s+operator:/);
    assert.equal(
      await live.ok('streams', 'detach', task, 'ops'),
      `forgot the durable attachment of ${task} to ops\ndetached ${task} (${session}) from ops\n`,
    );
    const wrong = await live.cli('streams', 'attach', session, 'ops', '--durable');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /--durable needs a task id/);
  });
});
