/**
 * `ipc_spawn` with `pipe: 'sync'` (seed 000: it blocks until the child finishes): with a
 * prompt the call answers the child's result once it is done, within syncSpawnWaitMs; a child
 * not done by then is left running and the answer says to wait again. The wait is the
 * kernel's own event-driven child wait, so other calls go on while one blocks.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { call, forEachWarren, until } from '../helpers/warrens.ts';

/** Replies to its prompt, then stays on call (idle). */
const replier = { steps: [{ reply: 'done ${self.prompt}' }, { listen: {} }] };

forEachWarren("ipc_spawn pipe 'sync'", (t) => {
  it('with a prompt: answers once the child is done, with its status, last message and pipe output (a copy)', async () => {
    const w = await t.open();
    const r = await call(w, 'ipc_spawn', { prompt: 'task 1', pipe: 'sync', script: replier });
    assert.equal(r.result.finished, true, JSON.stringify(r.result));
    assert.equal(r.result.status, 'idle');
    assert.equal(r.session.status, 'idle', 'the session as it is after the wait');
    assert.deepEqual(
      r.result.output.map((m: { text: string }) => m.text),
      ['done task 1'],
    );
    assert.match(r.result.next, /ipc_close/);
    // A copy: the pipe still gives it to ipc_read.
    const read = await call(w, 'ipc_read', { fd: r.pipeFd });
    assert.deepEqual(
      read.messages.map((m: { text: string }) => m.text),
      ['done task 1'],
    );

    // A child that ends: its end reason is the result.
    const ended = await call(w, 'ipc_spawn', {
      prompt: 'x',
      pipe: 'sync',
      script: { steps: [{ reply: 'bye' }, { exit: 'crashed' }] },
    });
    assert.deepEqual([ended.result.finished, ended.result.status], [true, 'stopped']);
    assert.ok(ended.result.endReason, JSON.stringify(ended.result));
    assert.deepEqual(
      ended.result.output.map((m: { text: string }) => m.text),
      ['bye'],
    );
  });

  it('other calls go on while one blocks; the wait wakes when the child is done', async () => {
    const w = await t.open();
    // The child stays busy in a read of its pipe until the operator writes to it.
    const pending = call(w, 'ipc_spawn', {
      prompt: 'gate',
      title: 'gate',
      pipe: 'sync',
      script: {
        steps: [{ read: { fd: 1, as: 'r' } }, { reply: 'got ${r.messages.0.text}' }, { listen: {} }],
      },
    });
    let answered = false;
    void pending.then(() => {
      answered = true;
    });
    const child = await until(async () => {
      const ps = await call(w, 'ps');
      return ps.sessions.find(
        (s: { title: string; status: string }) => s.title === 'gate' && s.status === 'running',
      );
    });
    const fds = await call(w, 'ipc_list_fds');
    const pipe = fds.fds.find((f: { streamName: string }) => f.streamName === `pipe:${child.id}`);
    assert.ok(pipe, JSON.stringify(fds.fds));
    assert.equal(answered, false, 'still blocked while the child is busy');
    await call(w, 'ipc_write', { fd: pipe.fd, message: 'release' });
    const r = await pending;
    assert.equal(r.result.finished, true);
    assert.deepEqual(
      r.result.output.map((m: { text: string }) => m.text),
      ['got release'],
    );
  });

  it('not done within syncSpawnWaitMs: the handle, finished false, and how to wait again', async () => {
    const w = await t.open({ kernel: { syncSpawnWaitMs: 300 } });
    const r = await call(w, 'ipc_spawn', {
      prompt: 'slow',
      pipe: 'sync',
      script: { steps: [{ read: { fd: 1 } }, { listen: {} }] },
    });
    assert.equal(r.result.finished, false);
    assert.equal(r.result.status, 'running');
    assert.deepEqual(r.result.output, []);
    assert.match(r.result.next, new RegExp(`ipc_wait with fd ${r.lifecycleFd}`));
    // A waitMs above the server's cap is capped, never longer.
    const capped = await call(w, 'ipc_spawn', {
      prompt: 'slow',
      pipe: 'sync',
      waitMs: 3_600_000,
      script: { steps: [{ read: { fd: 1 } }, { listen: {} }] },
    });
    assert.equal(capped.result.finished, false);
  });

  it('without a prompt, with waitMs 0, or with another pipe mode: answers at once, no result', async () => {
    const w = await t.open();
    for (const input of [
      { pipe: 'sync', script: replier },
      { pipe: 'sync', prompt: 'p', waitMs: 0, script: replier },
      { pipe: 'async', prompt: 'p', script: replier },
      { prompt: 'p', script: replier },
    ]) {
      const r = await call(w, 'ipc_spawn', input);
      assert.equal(r.result, undefined, JSON.stringify(input));
      assert.ok(typeof r.pipeFd === 'number');
    }
  });
});
