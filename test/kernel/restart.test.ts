import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  asSession,
  call,
  forEachWarren,
  idleScript,
  quiescent,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';

type Ev = { type: string; payload: Record<string, unknown> };

forEachWarren('restart', (t) => {
  it('sessions, streams, fds and cursors survive a restart; live sessions come back', async () => {
    const loc = t.location();
    const w1 = await t.open({ location: loc });
    const room = await call(w1, 'streams_create', { name: 'keep', selfEcho: true });
    const a = await call(w1, 'ipc_spawn', { script: idleScript, title: 'keeper' });
    await call(w1, 'streams_attach', { session: a.session.id, stream: 'keep', mode: 'detach' });
    await call(w1, 'ipc_write', { fd: room.fd, message: 'one' });
    const read = await call(w1, 'ipc_read', { fd: room.fd });
    await call(w1, 'ipc_write', { fd: room.fd, message: 'two' });
    const fdsBefore = (await call(w1, 'ipc_list_fds')).fds;
    await w1.close();

    const w2 = await t.open({ location: loc });
    assert.deepEqual(
      (await call(w2, 'ipc_list_fds')).fds.map((f: { fd: number; streamName: string }) => [
        f.fd,
        f.streamName,
      ]),
      fdsBefore.map((f: { fd: number; streamName: string }) => [f.fd, f.streamName]),
    );
    const again = await call(w2, 'ipc_read', { fd: room.fd });
    assert.deepEqual(
      again.messages.map((m: { text: string }) => m.text),
      ['two'],
      'the cursor survived: only what was not yet read is due',
    );
    assert.ok(again.cursor > read.cursor);
    const events = (await call(w2, 'session_events', { id: a.session.id })).events as Ev[];
    assert.ok(events.some((e) => e.type === 'session.status' && e.payload.reason === 'kernel restart'));
    await waitStatus(w2, a.session.id, 'idle');
  });

  it('a session a restart suspended but did not resume yet comes back at the next start', async () => {
    const loc = t.location();
    const w1 = await t.open({ location: loc });
    const a = await call(w1, 'ipc_spawn', { script: idleScript });
    await waitStatus(w1, a.session.id, 'idle');
    await w1.close();
    // A start that suspends it and ends before resuming it (as a crash during the background
    // resumption after /healthz answers would).
    const w2 = await t.open({ location: loc, kernel: { resumeOnStart: false } });
    const s = await sessionOf(w2, a.session.id);
    assert.equal(s.status, 'suspended');
    assert.equal(s.suspendReason, 'kernel restart');
    await w2.close();

    const w3 = await t.open({ location: loc });
    await waitStatus(w3, a.session.id, 'idle');
    const events = (await call(w3, 'session_events', { id: a.session.id })).events as Ev[];
    const suspended = events.filter((e) => e.type === 'session.status' && e.payload.to === 'suspended');
    assert.equal(suspended.length, 1, 'suspended once: the second start found it suspended already');
  });

  it('a SIGCHLD pending at shutdown is delivered once after restart, never twice', async () => {
    const loc = t.location();
    const w1 = await t.open({ location: loc });
    // The parent blocks in a read of its gate's pipe (inside a turn, not at a safe point) until
    // the test releases the gate after the restart: however slow the machine, the child's
    // SIGCHLD cannot be handed over before the restart.
    const parent = await call(w1, 'ipc_spawn', {
      script: {
        steps: [
          {
            spawn: {
              as: 'gate',
              pipe: 'sync',
              script: { steps: [{ wait: { match: 'release' } }, { reply: 'go' }, { listen: {} }] },
            },
          },
          { read: { fd: '$gate.pipeFd', as: 'go' } },
          { wait: { as: 'news', match: 'SIGCHLD.*completed' } },
          { say: 'got: ${news.text}' },
          { listen: {} },
        ],
      },
    });
    const gate = await until(async () => {
      const all = (await call(w1, 'ps', { all: true })).sessions as { id: string; parentId: string | null }[];
      return all.find((s) => s.parentId === parent.session.id)?.id;
    });
    const child = await call(
      w1,
      'ipc_spawn',
      { script: { steps: [{ exit: 'completed' }] } },
      asSession(parent.session.id),
    );
    await waitStatus(w1, child.session.id, 'stopped');
    await w1.close();

    const w2 = await t.open({ location: loc });
    await waitStatus(w2, gate, 'idle');
    await call(w2, 'send', { id: gate, text: 'release' });
    const said = await until(async () => {
      const s = await sessionOf(w2, parent.session.id);
      return s.lastMessage?.startsWith('got:') ? s.lastMessage : null;
    }, 20_000);
    assert.match(said, /\[SIGCHLD\].*stopped \(completed\)/);
    await waitStatus(w2, parent.session.id, 'idle');
    const stdin = await call(w2, 'streams_transcript', { stream: `stdin:${parent.session.id}` });
    const sigchld = stdin.messages.filter(
      (m: { signal?: string; data?: { status?: string } }) =>
        m.signal === 'SIGCHLD' && m.data?.status === 'stopped',
    );
    assert.equal(sigchld.length, 1, 'written once');
    await w2.close();

    // Another restart: it was delivered and acknowledged; nothing is due again.
    const w3 = await t.open({ location: loc });
    await waitStatus(w3, parent.session.id, 'idle');
    await quiescent(w3);
    const inputs = ((await call(w3, 'session_events', { id: parent.session.id })).events as Ev[]).filter(
      (e) => e.type === 'session.input',
    );
    const deliveries = inputs.filter((e) => String(e.payload.text).includes('stopped (completed)'));
    assert.equal(deliveries.length, 1, 'delivered once across two restarts');
  });

  it('two kernels live side by side in one process without touching each other', async () => {
    const w1 = await t.open();
    const w2 = await t.open();
    const a = await call(w1, 'ipc_spawn', { script: idleScript, title: 'one' });
    const b = await call(w2, 'ipc_spawn', { script: idleScript, title: 'two' });
    assert.notEqual(a.session.id, b.session.id);
    const titles = async (w: typeof w1) =>
      (await call(w, 'ps')).sessions.map((s: { title: string }) => s.title);
    assert.deepEqual(await titles(w1), ['init', 'one']);
    assert.deepEqual(await titles(w2), ['init', 'two']);
    await call(w1, 'kill', { id: a.session.id });
    assert.equal((await sessionOf(w2, b.session.id)).status === 'stopped', false);
  });
});
