import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  asSession,
  call,
  forEachWarren,
  idleScript,
  op,
  pages,
  sessionOf,
  waitStatus,
} from '../helpers/warrens.ts';

forEachWarren('spawn', (t) => {
  it('starts with init at depth 0 in zone default', async () => {
    const w = await t.open();
    const { sessions } = await call(w, 'ps');
    assert.deepEqual(
      sessions.map((s: { id: string; depth: number; status: string }) => [s.id, s.depth, s.status]),
      [['init', 0, 'running']],
    );
  });

  it('gives the child fds 0/1/2 and the spawner owned lifecycle and pipe fds', async () => {
    const w = await t.open();
    const r = await call(w, 'ipc_spawn', { title: 'a', script: idleScript, pipe: 'async' });
    assert.equal(r.session.depth, 1);
    assert.equal(r.session.parentId, 'init');
    assert.equal(r.created, true);
    const mine = (await call(w, 'ipc_list_fds')).fds;
    const byNum = Object.fromEntries(mine.map((f: { fd: number }) => [f.fd, f]));
    assert.equal(byNum[r.lifecycleFd].streamName, `lifecycle:${r.session.id}`);
    assert.equal(byNum[r.lifecycleFd].deliveryMode, 'detach');
    assert.equal(byNum[r.lifecycleFd].permission, 'rw');
    assert.equal(byNum[r.pipeFd].deliveryMode, 'async');
    assert.ok(byNum[r.pipeFd].owned && byNum[r.pipeFd].spawned);
    const childFds = (await call(w, 'ipc_list_fds', {}, asSession(r.session.id))).fds;
    assert.deepEqual(
      childFds.map((f: { fd: number; streamName: string; permission: string; deliveryMode: string }) => [
        f.fd,
        f.streamName.split(':')[0],
        f.permission,
        f.deliveryMode,
      ]),
      [
        [0, 'stdin', 'r', 'async'],
        [1, 'pipe', 'rw', 'async'],
        [2, 'lifecycle', 'rw', 'detach'],
      ],
    );
    await waitStatus(w, r.session.id, 'idle');
  });

  it('is idempotent per key', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript, idempotencyKey: 'k1' });
    const b = await call(w, 'ipc_spawn', { script: idleScript, idempotencyKey: 'k1' });
    assert.equal(a.session.id, b.session.id);
    assert.equal(b.created, false);
    assert.equal(b.lifecycleFd, a.lifecycleFd);
    assert.equal((await call(w, 'ps')).sessions.length, 2);
  });

  it('rejects a bad runtime, a bad script and bad input before writing anything', async () => {
    const w = await t.open();
    const before = (await call(w, 'events', { limit: 1000 })).events.length;
    await assert.rejects(call(w, 'ipc_spawn', { runtime: 'nope' }), { code: 'runtime_unavailable' });
    await assert.rejects(call(w, 'ipc_spawn', { script: { steps: [{ fly: 1 }] } }), {
      code: 'invalid_input',
    });
    await assert.rejects(call(w, 'ipc_spawn', { pipe: 'sideways' }), { code: 'invalid_input' });
    await assert.rejects(
      call(w, 'ipc_spawn', { runtime: 'command', command: 'no-such-binary-xyz' }),
      (e: Error & { code: string }) => {
        assert.equal(e.code, 'runtime_unavailable');
        assert.match(e.message, /no-such-binary-xyz/);
        return true;
      },
    );
    assert.equal((await call(w, 'events', { limit: 1000 })).events.length, before);
  });

  it('a session spawns its own children at depth + 1', async () => {
    const w = await t.open();
    // `ps` is in the sessions group, which an orchestrator gets on request.
    const parent = await call(w, 'ipc_spawn', { script: idleScript, toolGroups: ['sessions'] });
    const child = await call(w, 'ipc_spawn', { script: idleScript }, asSession(parent.session.id));
    assert.equal(child.session.parentId, parent.session.id);
    assert.equal(child.session.depth, 2);
    const { sessions } = await call(w, 'ps', {}, asSession(parent.session.id));
    assert.deepEqual(
      sessions.map((s: { id: string }) => s.id),
      [child.session.id],
    );
    assert.equal((await sessionOf(w, child.session.id)).status === 'stopped', false);
    void op;
  });

  it('ps pages in creation order: each page follows the last, stopped sessions only with all', async () => {
    const w = await t.open();
    const ids: string[] = ['init'];
    for (let i = 0; i < 5; i++) ids.push((await call(w, 'ipc_spawn', { script: idleScript })).session.id);
    await call(w, 'kill', { id: ids[2] });
    const psPages = async (input: Record<string, unknown>) =>
      (await pages(w, 'ps', 'sessions', { ...input, limit: 2 })).map((p) =>
        p.map((s: { id: string }) => s.id),
      );
    const live = ids.filter((id) => id !== ids[2]);
    assert.deepEqual(await psPages({}), [live.slice(0, 2), live.slice(2, 4), live.slice(4)]);
    assert.deepEqual((await psPages({ all: true })).flat(), ids);
    // A page after a session that has since gone from the list starts at the next one above it.
    const afterKilled = await call(w, 'ps', { after: ids[2], limit: 10 });
    assert.deepEqual(
      afterKilled.sessions.map((s: { id: string }) => s.id),
      ids.slice(3),
    );
    assert.equal(afterKilled.next, null);
  });
});
