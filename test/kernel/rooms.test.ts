import assert from 'node:assert/strict';
import { it } from 'node:test';
import { asSession, call, forEachWarren, idleScript, until } from '../helpers/warrens.ts';

forEachWarren('operator rooms', (t) => {
  it('a room lives with no agent in it, anchored by the operator', async () => {
    const w = await t.open();
    const room = await call(w, 'streams_create', { name: 'planning' });
    assert.equal(room.stream.owner, 'operator:admin');
    const [listed] = (await call(w, 'ipc_list_streams')).streams;
    assert.equal(listed.name, 'planning');
    assert.deepEqual(
      listed.subscribers.map((f: { holder: string; permission: string; deliveryMode: string }) => [
        f.holder,
        f.permission,
        f.deliveryMode,
      ]),
      [['operator:admin', 'rw', 'detach']],
    );
    await assert.rejects(call(w, 'streams_create', { name: 'planning' }), { code: 'name_taken' });
  });

  it('attach, attachments, detach (idempotent); the room outlives its agents', async () => {
    const w = await t.open();
    await call(w, 'streams_create', { name: 'war-room', selfEcho: true });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const att = await call(w, 'streams_attach', {
      session: a.session.id,
      stream: 'war-room',
      permission: 'r',
      mode: 'sync',
    });
    assert.equal(att.created, true);
    const again = await call(w, 'streams_attach', { session: a.session.id, stream: 'war-room' });
    assert.equal(again.created, false);
    assert.equal(again.fd, att.fd);
    const { fds } = await call(w, 'streams_attachments', { session: a.session.id });
    assert.deepEqual(
      fds.map((f: { streamName: string; permission: string; deliveryMode: string }) => [
        f.streamName,
        f.permission,
        f.deliveryMode,
      ]),
      [['war-room', 'r', 'sync']],
    );
    assert.equal(
      (await call(w, 'streams_detach', { session: a.session.id, stream: 'war-room' })).detached,
      1,
    );
    assert.equal(
      (await call(w, 'streams_detach', { session: a.session.id, stream: 'war-room' })).detached,
      0,
    );
    assert.deepEqual((await call(w, 'streams_attachments', { session: a.session.id })).fds, []);
    assert.equal((await call(w, 'ipc_list_streams')).streams[0].name, 'war-room');
  });

  it('attaching a session that is not live is refused', async () => {
    const w = await t.open();
    await call(w, 'streams_create', { name: 'r' });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    await call(w, 'kill', { id: a.session.id });
    await assert.rejects(call(w, 'streams_attach', { session: a.session.id, stream: 'r' }), {
      code: 'session_stopped',
    });
    await assert.rejects(call(w, 'streams_attach', { session: 'ses_nope', stream: 'r' }), {
      code: 'not_found',
    });
  });

  it('close evicts every subscriber and removes the room; undelivered needs force', async () => {
    const w = await t.open();
    const room = await call(w, 'streams_create', { name: 'closing' });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    await call(w, 'streams_attach', { session: a.session.id, stream: 'closing', mode: 'detach' });
    await call(w, 'ipc_write', { fd: room.fd, message: 'unread by a' });
    await assert.rejects(call(w, 'streams_close', { stream: 'closing' }), { code: 'undelivered_messages' });
    const closed = await call(w, 'streams_close', { stream: 'closing', force: true });
    assert.deepEqual(closed.evicted.sort(), ['operator:admin', a.session.id].sort());
    const forced = (await call(w, 'events', { type: 'fd.closed', limit: 10 })).events.filter(
      (e: { payload: { holder: string } }) => e.payload.holder === a.session.id,
    );
    assert.equal(forced[0].payload.forced, true, 'a forced close is logged as forced');
    assert.equal(forced[0].payload.undelivered, 1);
    assert.deepEqual((await call(w, 'ipc_list_streams')).streams, []);
    assert.deepEqual((await call(w, 'streams_attachments', { session: a.session.id })).fds, []);
    // The name is free again; the old transcript stays readable by id.
    await call(w, 'streams_create', { name: 'closing' });
    const old = await call(w, 'streams_transcript', { stream: room.stream.id });
    assert.equal(old.messages[0].text, 'unread by a');
  });

  it('reserved plumbing cannot be created, attached to, or closed from outside', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    for (const name of ['pipe:x', 'lifecycle:x', 'stdin:x']) {
      await assert.rejects(call(w, 'streams_create', { name }), { code: 'reserved_name' });
      await assert.rejects(call(w, 'ipc_create_stream', { name }, asSession(a.session.id)), {
        code: 'reserved_name',
      });
    }
    const pipe = `pipe:${a.session.id}`;
    await assert.rejects(call(w, 'streams_attach', { session: a.session.id, stream: pipe }), {
      code: 'reserved_name',
    });
    await assert.rejects(call(w, 'streams_close', { stream: pipe }), { code: 'reserved_name' });
    await assert.rejects(
      call(w, 'streams_detach', { session: a.session.id, stream: `stdin:${a.session.id}` }),
      {
        code: 'reserved_name',
      },
    );
    const internal = (await call(w, 'ipc_list_streams', { internal: true })).streams.map(
      (s: { name: string }) => s.name,
    );
    assert.ok(internal.includes(pipe), 'the plumbing is still there');
  });

  it('agents in a room talk: async holders get messages pushed', async () => {
    const w = await t.open();
    const room = await call(w, 'streams_create', { name: 'chat', selfEcho: true });
    const a = await call(w, 'ipc_spawn', {
      script: { steps: [{ listen: { say: 'heard ${input.messages.0.text}' } }] },
    });
    await call(w, 'streams_attach', { session: a.session.id, stream: 'chat', mode: 'async' });
    await call(w, 'ipc_write', { fd: room.fd, message: 'hello agents' });
    await until(
      async () =>
        (await call(w, 'session_show', { id: a.session.id })).session.lastMessage === 'heard hello agents',
    );
  });

  it('sessions are not operators: they cannot use the control plane', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    await assert.rejects(call(w, 'streams_create', { name: 'x' }, asSession(a.session.id)), {
      code: 'forbidden',
    });
    await assert.rejects(call(w, 'events', {}, asSession(a.session.id)), { code: 'forbidden' });
  });
});
