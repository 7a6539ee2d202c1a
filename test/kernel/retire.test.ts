import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertRowsBoundedAfterCycles } from '../helpers/cycles.ts';
import {
  asSession,
  call,
  deepTrees,
  forEachWarren,
  idleScript,
  rowCounts,
  waitStatus,
} from '../helpers/warrens.ts';

/** Nothing grows forever: deleting sessions, and retention of stopped sessions and closed streams. */
forEachWarren('retire', (t) => {
  it('session delete is bottom-up, like rmdir, and only for stopped sessions', async () => {
    const w = await t.open({ gating: deepTrees });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const b = await call(w, 'ipc_spawn', { script: idleScript }, asSession(a.session.id, 1));
    await assert.rejects(call(w, 'session_delete', { id: a.session.id }), (e: Error & { code: string }) => {
      assert.equal(e.code, 'conflict');
      assert.match(e.message, /is (idle|running|pending); stop it/);
      return true;
    });
    await call(w, 'kill', { id: a.session.id });
    await waitStatus(w, b.session.id, 'stopped');
    await assert.rejects(call(w, 'session_delete', { id: a.session.id }), (e: Error & { code: string }) => {
      assert.match(e.message, new RegExp(`still has children \\(${b.session.id}`));
      return true;
    });
    await call(w, 'session_delete', { id: b.session.id });
    await call(w, 'session_delete', { id: a.session.id });
    await assert.rejects(call(w, 'session_show', { id: a.session.id }), { code: 'not_found' });
    const deleted = (await call(w, 'events', { type: 'session.deleted' })).events;
    assert.equal(deleted.length, 2, 'the log records the deletes and keeps the history');
    const left = await rowCounts(w);
    assert.equal(left.sessions, 1, 'only init is left');
    assert.equal(left.fds, 0);
    assert.equal(left.streams, 0);
  });

  it('500 spawn/stop cycles leave the row counts bounded once retention has run', () =>
    assertRowsBoundedAfterCycles(t, 500));

  it('a zone’s limits are set without a restart and checked by the next spawn', async () => {
    const w = await t.open();
    const r = await call(w, 'zones_set_limits', { maxSessionsPerZone: 2 });
    assert.equal(r.limits.maxSessionsPerZone, 2);
    await call(w, 'ipc_spawn', { script: idleScript });
    await call(w, 'ipc_spawn', { script: idleScript });
    await assert.rejects(call(w, 'ipc_spawn', { script: idleScript }), { code: 'limit_exceeded' });
    const cleared = await call(w, 'zones_set_limits', { maxSessionsPerZone: null });
    assert.equal(cleared.limits.maxSessionsPerZone, 50, 'null falls back to the server’s limit');
    await call(w, 'ipc_spawn', { script: idleScript });
    const sess = await call(w, 'ipc_spawn', { script: idleScript });
    await assert.rejects(call(w, 'zones_set_limits', { maxDepth: 3 }, asSession(sess.session.id, 1)), {
      code: 'forbidden',
    });
  });
});
