import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  asSession,
  call,
  deepTrees,
  eventsOf,
  forEachWarren,
  idleScript,
  outputs,
  quiescent,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';

/** Open is reanimate; drops suspend; writes to a gone peer fail like EPIPE. */
forEachWarren('reanimate', (t) => {
  /** A session left suspended by a restart that does not resume anything. */
  async function suspendedByRestart(script: unknown, spawn: Record<string, unknown> = {}) {
    const loc = t.location();
    const w1 = await t.open({ location: loc });
    const a = await call(w1, 'ipc_spawn', { script, title: 'sleeper', ...spawn });
    await waitStatus(w1, a.session.id, 'idle');
    await w1.close();
    const w2 = await t.open({ location: loc, kernel: { resumeOnStart: false } });
    const s = await sessionOf(w2, a.session.id);
    assert.equal(s.status, 'suspended');
    assert.equal(s.suspendReason, 'kernel restart');
    return { w: w2, id: a.session.id as string, pipeFd: a.pipeFd as number };
  }

  it('opening a suspended session’s lifecycle reanimates it, from where it stood', async () => {
    const { w, id } = await suspendedByRestart({
      steps: [{ say: 'first' }, { listen: { say: 'heard ${input.text}' } }],
    });
    const r = await call(w, 'session_open', { id });
    assert.equal(r.reanimated, true);
    assert.ok(r.lifecycleFd >= 3);
    await waitStatus(w, id, 'idle');
    await call(w, 'send', { id, text: 'hello' });
    await until(async () => (await outputs(w, id)).some((o) => o.includes('heard')), 20_000, 'the reply');
    assert.deepEqual(
      (await outputs(w, id)).filter((o) => o === 'first'),
      ['first'],
      'it resumed at its step: nothing before it ran again',
    );
    assert.ok((await eventsOf(w, id)).some((e) => e.type === 'session.reanimated'));
  });

  it('an operator’s input wakes a suspended session; a session’s input queues without waking it', async () => {
    const loc = t.location();
    const w1 = await t.open({ location: loc, gating: deepTrees });
    const lead = await call(w1, 'ipc_spawn', { script: idleScript });
    const child = await call(
      w1,
      'ipc_spawn',
      { script: { steps: [{ listen: { say: 'got ${input.text}' } }] } },
      asSession(lead.session.id, 1),
    );
    await waitStatus(w1, child.session.id, 'idle');
    await w1.close();
    const w = await t.open({ location: loc, gating: deepTrees, kernel: { resumeOnStart: false } });
    assert.equal((await sessionOf(w, child.session.id)).status, 'suspended');
    // The parent writes to its suspended child: queued, not woken (default policy: operators wake).
    await call(w, 'ipc_write', { fd: child.pipeFd, message: 'from-parent' }, asSession(lead.session.id, 1));
    await quiescent(w); // a wake-up the write caused is committed by now
    assert.equal((await sessionOf(w, child.session.id)).status, 'suspended');
    // The operator's input wakes it, and it gets both, in order.
    await call(w, 'send', { id: child.session.id, text: 'from-operator' });
    await until(
      async () => (await outputs(w, child.session.id)).some((o) => o.includes('from-operator')),
      5000,
      'the woken child to answer',
    );
    const said = (await outputs(w, child.session.id)).join('\n');
    assert.ok(said.indexOf('from-parent') < said.indexOf('from-operator'), said);
  });

  it('a session’s policy decides who wakes it', async () => {
    const { w, id } = await suspendedByRestart(idleScript, { wakeOnInput: 'never' });
    await call(w, 'send', { id, text: 'ping' });
    await quiescent(w); // a wake-up the send caused is committed by now
    assert.equal((await sessionOf(w, id)).status, 'suspended', 'queued, not woken');
    await call(w, 'session_open', { id });
    await waitStatus(w, id, 'idle');
  });

  it('a session that stopped cleanly comes back when opened; one that was killed does not', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', {
      script: { steps: [{ wait: {} }, { exit: 'completed' }, { listen: { say: 'back: ${input.text}' } }] },
    });
    await waitStatus(w, a.session.id, 'idle');
    await call(w, 'send', { id: a.session.id, text: 'go' });
    await waitStatus(w, a.session.id, 'stopped');
    assert.equal((await sessionOf(w, a.session.id)).endReason, 'completed');
    const r = await call(w, 'session_open', { id: a.session.id, pipe: 'detach' });
    assert.equal(r.reanimated, true);
    await waitStatus(w, a.session.id, 'idle');
    await call(w, 'send', { id: a.session.id, text: 'again' });
    await until(
      async () => (await outputs(w, a.session.id)).some((o) => /^back: .*again$/.test(o)),
      5000,
      'the revived reply',
    );

    const b = await call(w, 'ipc_spawn', { script: idleScript });
    await call(w, 'kill', { id: b.session.id });
    await assert.rejects(call(w, 'session_open', { id: b.session.id }), { code: 'session_stopped' });
  });

  it('writing to the pipe of a child that has stopped is peer_gone, and writes nothing', async () => {
    const w = await t.open({ gating: deepTrees });
    const lead = await call(w, 'ipc_spawn', { script: idleScript });
    const me = asSession(lead.session.id, 1);
    const child = await call(w, 'ipc_spawn', { script: { steps: [{ exit: 'crashed' }] } }, me);
    await waitStatus(w, child.session.id, 'stopped');
    await assert.rejects(
      call(w, 'ipc_write', { fd: child.pipeFd, message: 'anyone?' }, me),
      (e: Error & { code: string }) => {
        assert.equal(e.code, 'peer_gone');
        assert.match(e.message, /has stopped \(crashed\)/);
        return true;
      },
    );
    const messages = (await call(w, 'events', { type: 'stream.message', limit: 1000 })).events;
    assert.ok(
      !messages.some((e: { payload: { text?: string } }) => e.payload.text === 'anyone?'),
      'nothing was written',
    );
  });

  it('spawning on a runner that does not exist is not_found, not a silent local run', async () => {
    const w = await t.open();
    await assert.rejects(
      call(w, 'ipc_spawn', { script: idleScript, runner: 'gpu-box' }),
      (e: Error & { code: string }) => {
        assert.equal(e.code, 'not_found');
        assert.match(e.message, /environment "gpu-box" does not exist/);
        return true;
      },
    );
    const ok = await call(w, 'ipc_spawn', { script: idleScript, runner: 'local' });
    assert.equal(ok.session.runner, 'local');
  });
});
