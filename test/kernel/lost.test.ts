import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Warren } from '../../src/syscalls/warren.ts';
import { gone } from '../helpers/processes.ts';
import { call, forEachWarren, sessionOf, until, waitStatus } from '../helpers/warrens.ts';

/** An agent process that disappears without warren asking is lost: its session suspends, it does not end. */
forEachWarren('lost agents', (t) => {
  const agent = {
    runtime: 'command',
    // sh, not bash: bash whose stdin is a socket (node's pipes) reads ~/.bashrc, which on some
    // hosts runs slow shell set-up before the agent does anything.
    command: [
      'sh',
      '-c',
      'echo \'{"warren":"idle"}\'; echo \'{"warren":"activity","text":"compiling"}\'; exec sleep 1000',
    ],
    title: 'builder',
  };

  const recordedPid = async (w: Warren, id: string) =>
    until(
      async () =>
        (
          await w.store.reader
            .selectFrom('agent_procs')
            .select('pid')
            .where('session_id', '=', id)
            .executeTakeFirst()
        )?.pid,
      5000,
      'the agent process record',
    );

  it('shows what a live agent is doing, in session show and ps', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', agent);
    try {
      await until(
        async () => (await sessionOf(w, a.session.id)).activity === 'compiling',
        5000,
        'the activity',
      );
      const ps = (await call(w, 'ps')).sessions.find((s: { id: string }) => s.id === a.session.id);
      assert.equal(ps.activity, 'compiling');
    } finally {
      await call(w, 'kill', { id: a.session.id });
    }
  });

  it('killed from outside: suspended with a reason, not crashed; open brings it back as a new process', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', agent);
    const pid = await recordedPid(w, a.session.id);
    process.kill(pid, 'SIGKILL');
    await waitStatus(w, a.session.id, 'suspended');
    const s = await sessionOf(w, a.session.id);
    assert.match(s.suspendReason, /ended by SIGKILL from outside warren/);
    assert.equal(s.endReason, null);
    assert.equal(
      await w.store.reader
        .selectFrom('agent_procs')
        .select('pid')
        .where('session_id', '=', a.session.id)
        .executeTakeFirst(),
      undefined,
      'its process record is gone with it',
    );
    const r = await call(w, 'session_open', { id: a.session.id });
    assert.equal(r.reanimated, true);
    const again = await recordedPid(w, a.session.id);
    assert.notEqual(again, pid);
    await call(w, 'kill', { id: a.session.id });
    await until(() => gone(again), 20_000, 'the new agent process to be gone after kill');
  });

  it('an agent that fails on its own crashes, with why in endDetail', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', {
      runtime: 'command',
      command: ['sh', '-c', 'echo broken >&2; exit 3'],
    });
    await waitStatus(w, a.session.id, 'stopped');
    const s = await sessionOf(w, a.session.id);
    assert.equal(s.endReason, 'crashed');
    assert.match(s.endDetail, /exited with code 3/);
  });
});
