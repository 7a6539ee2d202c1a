import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  asSession,
  call,
  deepTrees,
  forEachWarren,
  idleScript,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';

type Ev = { type: string; payload: Record<string, unknown>; session_id: string | null };

const signalsTo = async (w: Parameters<typeof call>[0], id: string, signal: string) =>
  (await call(w, 'session_events', { id, limit: 1000 })).events.filter(
    (e: Ev) => e.type === 'signal' && e.payload.signal === signal,
  ) as Ev[];

forEachWarren('lifecycle', (t) => {
  it('alive means held: closing the last fd on a child reaps it', async () => {
    const w = await t.open();
    const c = await call(w, 'ipc_spawn', { script: idleScript, pipe: 'async' });
    await call(w, 'ipc_close', { fd: c.pipeFd });
    assert.notEqual((await sessionOf(w, c.session.id)).status, 'stopped');
    const r = await call(w, 'ipc_close', { fd: c.lifecycleFd });
    assert.deepEqual(r.reaped, [c.session.id]);
    const s = await sessionOf(w, c.session.id);
    assert.equal(s.status, 'stopped');
    assert.equal(s.endReason, 'reaped');
  });

  it('SIGKILL cascades down the tree through owned streams', async () => {
    const w = await t.open({ gating: deepTrees });
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const b = await call(w, 'ipc_spawn', { script: idleScript }, asSession(a.session.id));
    const c = await call(w, 'ipc_spawn', { script: idleScript }, asSession(b.session.id, 2));
    const room = await call(w, 'ipc_create_stream', { name: 'a-room' }, asSession(a.session.id));
    await call(w, 'kill', { id: a.session.id });
    assert.equal((await sessionOf(w, a.session.id)).endReason, 'killed');
    assert.equal((await sessionOf(w, b.session.id)).endReason, 'reaped');
    assert.equal((await sessionOf(w, c.session.id)).endReason, 'reaped');
    const names = (await call(w, 'ipc_list_streams', { internal: true })).streams.map(
      (s: { name: string }) => s.name,
    );
    assert.ok(!names.includes('a-room'), 'streams it owned are torn down');
    assert.ok(room.fd >= 3);
    const fds = (await call(w, 'ipc_list_fds')).fds.filter((f: { streamName: string }) =>
      f.streamName.includes(a.session.id),
    );
    assert.equal(fds.length, 0, "an operator's handles on a session it killed are released");
  });

  it('a session that ends on its own hands its children to its parent with ADOPTED', async () => {
    const w = await t.open({ gating: deepTrees });
    const gp = await call(w, 'ipc_spawn', { script: idleScript });
    // Waits for the operator's word only: its child going idle sends it SIGCHLD, which an
    // unfiltered wait would take instead, ending p before a slow poll ever sees it idle.
    const p = await call(
      w,
      'ipc_spawn',
      { script: { steps: [{ wait: { match: 'from=operator:admin' } }, { exit: 'completed' }] } },
      asSession(gp.session.id),
    );
    const child = await call(w, 'ipc_spawn', { script: idleScript }, asSession(p.session.id, 2));
    await waitStatus(w, p.session.id, 'idle');
    await call(w, 'send', { id: p.session.id, text: 'finish' });
    await waitStatus(w, p.session.id, 'stopped');
    assert.equal((await sessionOf(w, p.session.id)).endReason, 'completed');
    const c = await sessionOf(w, child.session.id);
    assert.notEqual(c.status, 'stopped');
    assert.equal(c.parentId, gp.session.id);
    const adopted = await signalsTo(w, gp.session.id, 'ADOPTED');
    assert.equal(adopted.length, 1);
    assert.equal(adopted[0]!.payload.child, child.session.id);
    const gpFds = (await call(w, 'ipc_list_fds', {}, asSession(gp.session.id))).fds.map(
      (f: { streamName: string }) => f.streamName,
    );
    assert.ok(gpFds.includes(`lifecycle:${child.session.id}`));
    const stdin = await call(w, 'streams_transcript', { stream: `stdin:${gp.session.id}` });
    assert.ok(stdin.messages.some((m: { text: string }) => m.text.startsWith('[ADOPTED]')));
  });

  it('orphans of a top-level session go to init', async () => {
    const w = await t.open();
    const p = await call(w, 'ipc_spawn', { script: { steps: [{ wait: { match: 'from=operator:admin' } }] } });
    const child = await call(w, 'ipc_spawn', { script: idleScript }, asSession(p.session.id));
    await waitStatus(w, p.session.id, 'idle');
    await call(w, 'send', { id: p.session.id, text: 'go' });
    await waitStatus(w, p.session.id, 'stopped');
    assert.equal((await sessionOf(w, child.session.id)).parentId, 'init');
    const fds = (await call(w, 'ipc_list_fds', {}, asSession('init', 0))).fds;
    assert.equal(fds.length, 2);
  });

  it('parent-close policies: terminate kills the child, sigterm asks it to stop', async () => {
    const w = await t.open({ kernel: { termGraceMs: 60_000 } });
    const p = await call(w, 'ipc_spawn', { script: { steps: [{ wait: { match: 'from=operator:admin' } }] } });
    const asP = asSession(p.session.id);
    const killed = await call(w, 'ipc_spawn', { script: idleScript, parentClose: 'terminate' }, asP);
    const termed = await call(
      w,
      'ipc_spawn',
      { script: { steps: [{ wait: {} }, { exit: 'completed' }] }, parentClose: 'sigterm' },
      asP,
    );
    await waitStatus(w, termed.session.id, 'idle');
    await waitStatus(w, p.session.id, 'idle');
    await call(w, 'send', { id: p.session.id, text: 'go' });
    await waitStatus(w, p.session.id, 'stopped');
    assert.equal((await sessionOf(w, killed.session.id)).endReason, 'killed');
    await waitStatus(w, termed.session.id, 'stopped');
    assert.equal((await sessionOf(w, termed.session.id)).endReason, 'terminated');
    assert.equal((await signalsTo(w, termed.session.id, 'SIGTERM')).length, 1);
  });

  it('SIGTERM: an agent that wraps up ends as terminated', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', {
      script: { steps: [{ wait: { as: 'why' } }, { say: '${why.text}' }] },
    });
    await waitStatus(w, a.session.id, 'idle');
    const r = await call(w, 'kill', { id: a.session.id, graceful: true });
    assert.equal(r.signal, 'SIGTERM');
    await waitStatus(w, a.session.id, 'stopped');
    const s = await sessionOf(w, a.session.id);
    assert.equal(s.endReason, 'terminated');
    assert.match(s.lastMessage, /^\[SIGTERM\]/);
  });

  it('SIGTERM: past the grace period the kernel sends SIGKILL', async () => {
    const w = await t.open({ kernel: { termGraceMs: 150 } });
    const a = await call(w, 'ipc_spawn', { script: { steps: [{ sleep: 60_000 }] } });
    const r = await call(w, 'ipc_terminate', { fd: a.lifecycleFd });
    assert.equal(r.signal, 'SIGTERM');
    await waitStatus(w, a.session.id, 'stopped', 20_000);
    assert.equal((await sessionOf(w, a.session.id)).endReason, 'killed');
    const kill = await signalsTo(w, a.session.id, 'SIGKILL');
    assert.equal(kill[0]!.payload.escalatedFrom, 'SIGTERM');
    assert.match((await sessionOf(w, a.session.id)).endDetail, /grace period ran out/);
    assert.ok(
      !(await call(w, 'ipc_list_fds')).fds.some((f: { fd: number }) => f.fd === a.lifecycleFd),
      "the operator's handle is released once the session stops",
    );
  });

  it('SIGCHLD wakes the parent with the child id, status and last message, once per change', async () => {
    const w = await t.open();
    const p = await call(w, 'ipc_spawn', { script: idleScript });
    const c = await call(
      w,
      'ipc_spawn',
      { script: { steps: [{ say: 'half way' }, { wait: {} }, { say: 'all done' }] } },
      asSession(p.session.id),
    );
    await waitStatus(w, c.session.id, 'idle');
    await call(w, 'send', { id: c.session.id, text: 'finish' });
    await waitStatus(w, c.session.id, 'stopped');
    const sig: Ev[] = await until(async () => {
      const s = await signalsTo(w, p.session.id, 'SIGCHLD');
      return s.length >= 2 ? s : null;
    });
    assert.deepEqual(
      sig.map((e) => [e.payload.child, e.payload.status, e.payload.lastMessage]),
      [
        [c.session.id, 'idle', 'half way'],
        [c.session.id, 'stopped', 'all done'],
      ],
    );
    const inputs = await until(async () => {
      const evs = (await call(w, 'session_events', { id: p.session.id })).events.filter(
        (e: Ev) => e.type === 'session.input',
      );
      const text = evs.map((e: Ev) => e.payload.text).join('\n');
      return (text.match(/\[SIGCHLD\]/g) ?? []).length >= 2 && text;
    });
    assert.equal((inputs.match(/\[SIGCHLD\]/g) ?? []).length, 2, 'delivered once each');
  });

  it('SIGSTOP and SIGCONT act on the whole subtree', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const b = await call(w, 'ipc_spawn', { script: idleScript }, asSession(a.session.id));
    await waitStatus(w, b.session.id, 'idle');
    const r = await call(w, 'suspend', { id: a.session.id });
    assert.deepEqual(r.sessions.sort(), [a.session.id, b.session.id].sort());
    for (const id of [a.session.id, b.session.id]) {
      const s = await sessionOf(w, id);
      assert.equal(s.status, 'suspended');
      assert.equal(s.suspendReason, 'SIGSTOP');
    }
    const resumed = await call(w, 'resume', { id: a.session.id });
    assert.deepEqual(resumed.continued.sort(), [a.session.id, b.session.id].sort());
    await waitStatus(w, a.session.id, 'idle');
    await waitStatus(w, b.session.id, 'idle');
  });

  it('TTL expiry and turn budgets end sessions with their reasons', async () => {
    const w = await t.open();
    const ttl = await call(w, 'ipc_spawn', { script: idleScript, ttlSeconds: 1 });
    const budget = await call(w, 'ipc_spawn', { script: idleScript, maxTurns: 2 });
    await waitStatus(w, budget.session.id, 'idle');
    await call(w, 'send', { id: budget.session.id, text: 'one' });
    await waitStatus(w, budget.session.id, 'stopped');
    assert.equal((await sessionOf(w, budget.session.id)).endReason, 'budget_exceeded');
    await new Promise((r) => setTimeout(r, 1050));
    await w.kernel.reconcile();
    assert.equal((await sessionOf(w, ttl.session.id)).endReason, 'expired');
  });

  it('only operators, or a session for its own subtree, may signal', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const b = await call(w, 'ipc_spawn', { script: idleScript });
    await assert.rejects(call(w, 'kill', { id: b.session.id }, asSession(a.session.id)), {
      code: 'forbidden',
    });
    await assert.rejects(call(w, 'kill', { id: 'init' }), { code: 'forbidden' });
    await assert.rejects(call(w, 'kill', { id: 'ses_nope' }), { code: 'not_found' });
    await call(w, 'kill', { id: b.session.id });
    const head = (await call(w, 'events', { limit: 1 })).events[0].seq;
    await assert.rejects(call(w, 'kill', { id: b.session.id }), { code: 'session_stopped' });
    assert.equal(
      (await call(w, 'events', { limit: 1 })).events[0].seq,
      head,
      'nothing written for a dead session',
    );
  });
});
