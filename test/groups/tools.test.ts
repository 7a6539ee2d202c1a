/**
 * The tools, called through the groups' sockets: messaging (and send_document's folder
 * jail), session, group management, delegation and the scheduler's arizuko tools.
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { call, forEachWarren, until } from '../helpers/warrens.ts';
import {
  type Any,
  errorOf,
  groupsOf,
  inputs,
  openGroups,
  socketClient,
  socketOf,
  start,
  tree,
} from './helpers.ts';

const ok = (r: Any) => {
  assert.equal(errorOf(r), null, JSON.stringify(r.structuredContent));
  return r.structuredContent as Any;
};

forEachWarren('groups: tools', (t) => {
  it('send_message, send_reply (to the last chat) and send_document (a file in the folder, nothing outside it)', async () => {
    const { w, dir } = await openGroups(t);
    await tree(w);
    await call(w, 'add_route', { seq: 1, match: '', target: 'main/a/b' });
    const inb = await call(w, 'groups_inbound', {
      platform: 'telegram',
      room: 'r1',
      chat_jid: 'tg:r1',
      sender: 'bob',
      verb: 'message',
      text: 'hi',
    });
    assert.equal(inb.group, 'main/a/b');
    await until(() => groupsOf(w).sockets.isOpen('main/a/b'), 15_000, 'the socket');
    const c = await socketClient(socketOf(dir, 'main/a/b'));
    const reply = ok(await c.callTool({ name: 'send_reply', arguments: { text: 'hello bob' } }));
    assert.equal(reply.chat_jid, 'tg:r1');
    ok(await c.callTool({ name: 'send_message', arguments: { chat_jid: 'tg:other', text: 'psst' } }));

    const folder = groupsOf(w).agents.dirOf('main/a/b');
    mkdirSync(join(folder, 'out'), { recursive: true });
    writeFileSync(join(folder, 'out', 'report.txt'), 'the report');
    writeFileSync(join(dir, 'secret.txt'), 'not yours');
    symlinkSync(join(dir, 'secret.txt'), join(folder, 'link.txt'));
    symlinkSync(dir, join(folder, 'up'));
    const doc = ok(
      await c.callTool({ name: 'send_document', arguments: { path: 'out/report.txt', caption: 'here' } }),
    );
    assert.equal(doc.path, 'out/report.txt');
    assert.equal(doc.bytes, 10);
    assert.equal(doc.chat_jid, 'tg:r1');
    assert.match(doc.sha256, /^[0-9a-f]{64}$/);
    for (const path of [
      '../secret.txt',
      'out/../../secret.txt',
      join(dir, 'secret.txt'),
      'link.txt',
      'up/secret.txt',
      'out',
      'missing.txt',
    ]) {
      const e = errorOf(await c.callTool({ name: 'send_document', arguments: { path } }));
      assert.equal(e?.code, 'invalid_input', path);
    }
    writeFileSync(join(folder, 'big.bin'), Buffer.alloc(2048));
    const big = errorOf(await c.callTool({ name: 'send_document', arguments: { path: 'big.bin' } }));
    assert.match(big!.message, /over the cap of 1024/);

    const sent = ((await call(w, 'events', { type: 'group.sent' })).events as Any[]).sort(
      (a, b) => a.seq - b.seq,
    );
    assert.deepEqual(
      sent.map((e) => [e.payload.kind, e.payload.chat_jid, e.actor]),
      [
        ['reply', 'tg:r1', 'operator:group:main/a/b'],
        ['message', 'tg:other', 'operator:group:main/a/b'],
        ['document', 'tg:r1', 'operator:group:main/a/b'],
      ],
    );
    assert.equal(sent[2].payload.document.sha256, doc.sha256);
  });

  it('delegation down and up is a message with a reply path, logged; clear_session starts afresh keeping the log', async () => {
    const { w, dir } = await openGroups(t);
    await tree(w);
    const a = await start(w, dir, 'main/a');
    const world = await socketClient(socketOf(dir, 'main/a'));
    const down = ok(
      await world.callTool({ name: 'delegate_to_child', arguments: { child: 'main/a/b', text: 'find X' } }),
    );
    assert.equal(down.how, 'started');
    assert.equal(
      errorOf(await world.callTool({ name: 'delegate_to_child', arguments: { child: 'main', text: 'x' } }))
        ?.code,
      'forbidden',
    );
    assert.equal(
      errorOf(await world.callTool({ name: 'delegate_to_child', arguments: { child: 'main/a', text: 'x' } }))
        ?.code,
      'forbidden',
    );
    await until(() => groupsOf(w).sockets.isOpen('main/a/b'), 15_000, 'b socket');
    const agent = await socketClient(socketOf(dir, 'main/a/b'));
    const up = ok(await agent.callTool({ name: 'delegate_to_parent', arguments: { text: 'X is 42' } }));
    assert.equal(up.to, 'main/a');
    assert.equal(up.sessionId, a.sessionId);
    const bIn = await inputs(w, down.sessionId);
    assert.match(
      bIn[0]!,
      new RegExp(
        `^\\[delegated by main/a \\(${down.delegation}\\); answer with delegate_to_parent\\]\\nfind X$`,
      ),
    );
    const aIn = await until(
      async () => (await inputs(w, a.sessionId)).find((x) => x.includes('X is 42')),
      15_000,
      'the answer',
    );
    assert.match(aIn, /^\[from child main\/a\/b .*answer with delegate_to_child child=main\/a\/b\]/);
    const logged = ((await call(w, 'events', { type: 'group.delegated' })).events as Any[])
      .map((e) => e.payload.direction)
      .sort();
    assert.deepEqual(logged, ['down', 'up']);

    // clear_session from the agent itself: its session ends after the answer; the log stays.
    const cleared = ok(await world.callTool({ name: 'clear_session', arguments: {} }));
    assert.equal(cleared.cleared, a.sessionId);
    await until(
      async () => (await call(w, 'session_show', { id: a.sessionId })).session.status === 'stopped',
      15_000,
      'the old session to end',
    );
    assert.ok((await inputs(w, a.sessionId)).length >= 1, 'its log stays');
    const again = await call(w, 'inject_message', { target: 'main/a', text: 'fresh' });
    assert.equal(again.how, 'started');
    assert.notEqual(again.sessionId, a.sessionId);
    // A world group may clear its child, not its parent.
    const world2 = await until(
      async () => (groupsOf(w).sockets.isOpen('main/a') ? socketClient(socketOf(dir, 'main/a')) : null),
      15_000,
      'socket',
    );
    assert.equal(
      ok(await world2.callTool({ name: 'clear_session', arguments: { target: 'main/a/b' } })).cleared,
      down.sessionId,
    );
    assert.equal(
      errorOf(await world2.callTool({ name: 'clear_session', arguments: { target: 'main' } }))?.code,
      'forbidden',
    );
  });

  it('group management: a world group registers under itself only and never picks an agent; root spawns groups', async () => {
    const { w, dir } = await openGroups(t);
    await tree(w);
    await start(w, dir, 'main');
    await start(w, dir, 'main/a');
    const root = await socketClient(socketOf(dir, 'main'));
    const world = await socketClient(socketOf(dir, 'main/a'));
    const reg = ok(
      await world.callTool({
        name: 'register_group',
        arguments: { folder: 'main/a/new', rules: ['deny:send_document'] },
      }),
    );
    assert.equal(reg.group.tier, 2);
    assert.deepEqual(reg.group.tools.sort(), ['delegate_to_parent', 'send_message', 'send_reply']);
    for (const [folder, code] of [
      ['main/b', 'forbidden'],
      ['main/a', 'forbidden'],
      ['main/a/new', 'conflict'],
      ['main/a/x/y', 'invalid_input'],
      ['main/a/../b', 'invalid_input'],
    ] as const) {
      assert.equal(
        errorOf(await world.callTool({ name: 'register_group', arguments: { folder } }))?.code,
        code,
        folder,
      );
    }
    const withAgent = errorOf(
      await world.callTool({
        name: 'register_group',
        arguments: { folder: 'main/a/z', agent: { runtime: 'command', command: 'sh' } },
      }),
    );
    assert.equal(withAgent?.code, 'forbidden');
    const seen = ok(await world.callTool({ name: 'get_groups', arguments: {} })).groups.map(
      (g: Any) => g.folder,
    );
    assert.deepEqual(seen, ['main/a', 'main/a/b', 'main/a/b/c', 'main/a/new']);
    const refreshed = ok(await world.callTool({ name: 'refresh_groups', arguments: {} }));
    assert.equal(refreshed.groups.find((g: Any) => g.folder === 'main/a').socket, true);
    // Root: spawn_group registers and starts; the new group's socket opens.
    const spawned = ok(
      await root.callTool({ name: 'spawn_group', arguments: { folder: 'main/s', prompt: 'go' } }),
    );
    assert.equal(spawned.how, 'started');
    assert.equal(spawned.group.tier, 1);
    await until(() => groupsOf(w).sockets.isOpen('main/s'), 15_000, 'main/s socket');
    assert.deepEqual(await inputs(w, spawned.sessionId), ['go']);
    assert.equal(
      errorOf(await root.callTool({ name: 'spawn_group', arguments: { folder: 'other' } }))?.code,
      'forbidden',
    );
    assert.equal(
      errorOf(await root.callTool({ name: 'inject_message', arguments: { target: 'main/s', text: 'more' } })),
      null,
    );
  });

  it('the scheduler’s arizuko tools through a socket: a group’s schedules are its own, and cannot spawn', async () => {
    const { w, dir } = await openGroups(t);
    await tree(w);
    await call(w, 'register_group', { folder: 'main/z' });
    await start(w, dir, 'main/a');
    await start(w, dir, 'main/z');
    const a = await socketClient(socketOf(dir, 'main/a'));
    const z = await socketClient(socketOf(dir, 'main/z'));
    const at = Date.now() + 3_600_000;
    const made = ok(
      await a.callTool({
        name: 'schedule_task',
        arguments: { name: 'later', at, task: { title: 'later', prompt: 'do it', hold: true } },
      }),
    );
    assert.equal(made.schedule.createdBy, 'operator:group:main/a');
    assert.equal(
      ok(await a.callTool({ name: 'get_task', arguments: { id: made.schedule.id } })).schedule.name,
      'later',
    );
    assert.equal(
      ok(await a.callTool({ name: 'update_task', arguments: { id: made.schedule.id, paused: true } }))
        .schedule.enabled,
      false,
    );
    assert.deepEqual(
      ok(await a.callTool({ name: 'list_tasks', arguments: {} })).schedules.map((s: Any) => s.id),
      [made.schedule.id],
    );
    // Another group sees none of it and may not touch it.
    assert.deepEqual(ok(await z.callTool({ name: 'list_tasks', arguments: {} })).schedules, []);
    for (const name of ['get_task', 'update_task', 'cancel_task']) {
      assert.equal(
        errorOf(await z.callTool({ name, arguments: { id: made.schedule.id } }))?.code,
        'forbidden',
        name,
      );
    }
    const spawn = errorOf(
      await a.callTool({ name: 'schedule_task', arguments: { at, spawn: { script: { steps: [] } } } }),
    );
    assert.equal(spawn?.code, 'forbidden');
    const taskSpawn = errorOf(
      await a.callTool({
        name: 'schedule_task',
        arguments: { at, task: { title: 't', prompt: 'p', spawn: { runtime: 'command' } } },
      }),
    );
    assert.equal(taskSpawn?.code, 'forbidden');
    ok(await a.callTool({ name: 'cancel_task', arguments: { id: made.schedule.id } }));
    assert.equal((await call(w, 'schedule_list', {})).schedules.length, 0);
  });
});
