import assert from 'node:assert/strict';
import { it } from 'node:test';
import { asSession, call, forEachWarren } from '../helpers/warrens.ts';
import { create, fails, listens, waitTask } from '../orchestration/helpers.ts';

/** Workpads: one per task, optimistic versions, the caller's own subtree, capped size. */
forEachWarren('workpads', (t) => {
  it('reads version 0 empty, writes with the version read, refuses a stale one', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'a', hold: true });
    const empty = (await call(w, 'workpad_read', { task: a.id })).workpad;
    assert.deepEqual(empty, { task: a.id, body: '', version: 0, updatedBy: null, updatedAt: null });
    const v1 = (await call(w, 'workpad_write', { task: a.id, body: 'step 1', version: 0 })).workpad;
    assert.equal(v1.version, 1);
    assert.equal(v1.updatedBy, 'operator:admin');
    const v2 = (await call(w, 'workpad_write', { task: a.id, body: 'step 1\nstep 2', version: 1 })).workpad;
    assert.equal(v2.version, 2);

    const e = (await fails(
      call(w, 'workpad_write', { task: a.id, body: 'lost update', version: 1 }),
      'conflict',
      /at version 2, not 1/,
    )) as Error & { details?: Record<string, unknown> };
    assert.deepEqual(e.details, { task: a.id, expected: 1, current: 2, reason: 'stale_version' });
    assert.equal((await call(w, 'workpad_read', { task: a.id })).workpad.body, 'step 1\nstep 2');
    await fails(call(w, 'workpad_write', { task: a.id, body: 'x', version: 0 }), 'conflict');

    // Concurrent writers from the same version: exactly one wins.
    const racers = await Promise.allSettled(
      ['x', 'y', 'z'].map((body) => call(w, 'workpad_write', { task: a.id, body, version: 2 })),
    );
    assert.equal(racers.filter((r) => r.status === 'fulfilled').length, 1);
    assert.equal((await call(w, 'workpad_read', { task: a.id })).workpad.version, 3);

    const written = (await call(w, 'events', { type: 'workpad.written', limit: 100 })).events;
    assert.equal(written.length, 3);
    assert.deepEqual(Object.keys(written[0].payload).sort(), ['bytes', 'sha256', 'task', 'version']);
  });

  it('caps its size and keeps sessions to their own subtree', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'a', spawn: listens });
    const b = await create(w, { title: 'b', hold: true });
    await fails(
      call(w, 'workpad_write', { task: b.id, body: 'x'.repeat(64 * 1024 + 1), version: 0 }),
      'invalid_input',
      /over the cap of 65536/,
    );
    await fails(call(w, 'workpad_read', { task: 'task_nope' }), 'not_found');
    const ra = await waitTask(w, a.id, 'running');
    const me = asSession(ra.sessionId);
    const mine = (await call(w, 'workpad_write', { task: a.id, body: 'mine', version: 0 }, me)).workpad;
    assert.equal(mine.updatedBy, ra.sessionId);
    await fails(call(w, 'workpad_read', { task: b.id }, me), 'forbidden');
    await fails(call(w, 'workpad_write', { task: b.id, body: 'not mine', version: 0 }, me), 'forbidden');
    // A session's finding is its own task's, and it may not file one under another's.
    const f = (await call(w, 'knowledge_post', { title: 'seen', body: 'by a' }, me)).finding;
    assert.equal(f.task, a.id);
    assert.equal(f.session, ra.sessionId);
    await fails(call(w, 'knowledge_post', { title: 'x', body: 'y', task: b.id }, me), 'forbidden');
  });
});
