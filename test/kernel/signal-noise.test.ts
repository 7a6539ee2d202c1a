/**
 * Fewer wake-ups (issue 24): SIGCHLDs of one child are coalesced into its latest state per
 * input, a restart that changed nothing for a child wakes no parent, and the fds a kill
 * closed read as closed (ipc_close on them is "already closed").
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  asSession,
  call,
  type Ev,
  forEachWarren,
  quiescent,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';

type W = Parameters<typeof call>[0];
const inputsOf = async (w: W, id: string): Promise<string[]> =>
  ((await call(w, 'session_events', { id, limit: 1000 })).events as Ev[])
    .filter((e) => e.type === 'session.input')
    .map((e) => String(e.payload.text));
const sigchlds = async (w: W, id: string): Promise<Ev[]> =>
  ((await call(w, 'session_events', { id, limit: 1000 })).events as Ev[]).filter(
    (e) => e.type === 'signal' && e.payload.signal === 'SIGCHLD',
  );
const childOf = (w: W, parent: string, title: string) =>
  until(async () => {
    const all = (await call(w, 'ps', { all: true })).sessions as {
      id: string;
      parentId: string;
      title: string;
    }[];
    return all.find((s) => s.parentId === parent && s.title === title)?.id;
  });

forEachWarren('signal noise', (t) => {
  it('a child that went idle three times while its parent was busy is one SIGCHLD line: its latest state', async () => {
    const w = await t.open();
    // The parent blocks in a read of its gate's pipe (busy, not at a safe point) until released.
    const parent = await call(w, 'ipc_spawn', {
      script: {
        steps: [
          {
            spawn: {
              as: 'gate',
              title: 'gate',
              pipe: 'sync',
              script: { steps: [{ wait: { match: 'release' } }, { reply: 'go' }, { listen: {} }] },
            },
          },
          {
            spawn: { as: 'kid', title: 'kid', script: { steps: [{ listen: { say: 'got ${input.text}' } }] } },
          },
          { read: { fd: '$gate.pipeFd' } },
          { listen: {} },
        ],
      },
    });
    const p = parent.session.id as string;
    const gate = await childOf(w, p, 'gate');
    const kid = await childOf(w, p, 'kid');
    await waitStatus(w, kid, 'idle');
    for (const word of ['one', 'two']) {
      await call(w, 'send', { id: kid, text: word });
      await until(async () => {
        const s = await sessionOf(w, kid);
        return s.status === 'idle' && String(s.lastMessage).endsWith(word);
      });
    }
    assert.ok((await sigchlds(w, p)).length >= 3, 'each idle is a SIGCHLD in the log');
    await waitStatus(w, gate, 'idle');
    await call(w, 'send', { id: gate, text: 'release' });
    const first = await until(async () => (await inputsOf(w, p))[0]);
    const kidLines = first.split('\n').filter((l) => l.startsWith('[SIGCHLD]') && l.includes(kid));
    assert.equal(kidLines.length, 1, `one line for the kid in ${first}`);
    assert.match(kidLines[0] as string, /is idle\. Last message: got two$/);
  });

  it('a restart that changed nothing for a child wakes no parent', async () => {
    const loc = t.location();
    const w1 = await t.open({ location: loc });
    const parent = await call(w1, 'ipc_spawn', {
      script: {
        steps: [{ spawn: { as: 'kid', title: 'kid', script: { steps: [{ listen: {} }] } } }, { listen: {} }],
      },
    });
    const p = parent.session.id as string;
    const kid = await childOf(w1, p, 'kid');
    await waitStatus(w1, kid, 'idle');
    // The parent took the kid's SIGCHLD (idle) and is idle again.
    await until(async () => (await inputsOf(w1, p)).some((x) => x.includes('[SIGCHLD]')));
    await waitStatus(w1, p, 'idle');
    const before = (await inputsOf(w1, p)).length;
    const signalsBefore = (await sigchlds(w1, p)).length;
    await w1.close();

    const w2 = await t.open({ location: loc });
    await waitStatus(w2, kid, 'idle');
    await waitStatus(w2, p, 'idle');
    await quiescent(w2); // a SIGCHLD or a wake-up the resume caused is committed by now
    assert.equal(
      (await sigchlds(w2, p)).length,
      signalsBefore,
      'no SIGCHLD for a resume that changed nothing',
    );
    assert.equal((await inputsOf(w2, p)).length, before, 'no wake-up');
    // It still hears real changes.
    await call(w2, 'send', { id: kid, text: 'work' });
    await until(async () => (await sigchlds(w2, p)).length > signalsBefore);
  });

  it("after a kill, closing the child's fds answers already closed; reading one says it is closed", async () => {
    const w = await t.open();
    const c = await call(w, 'ipc_spawn', { script: { steps: [{ listen: {} }] }, pipe: 'async' });
    await call(w, 'kill', { id: c.session.id });
    const closed = await call(w, 'ipc_close', { fd: c.lifecycleFd });
    assert.deepEqual([closed.closed, closed.alreadyClosed], [true, true]);
    await assert.rejects(call(w, 'ipc_read', { fd: c.pipeFd }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'fd_closed');
      assert.match(e.message, /fd \d+ is closed \(session .* killed\)/);
      return true;
    });
    // An fd that never existed is still not_found.
    await assert.rejects(call(w, 'ipc_close', { fd: 999 }), { code: 'not_found' });
    // A session parent's fds on a child it killed close as ever.
    // `kill` is in the sessions group, which an orchestrator gets on request.
    const a = await call(w, 'ipc_spawn', { script: { steps: [{ listen: {} }] }, toolGroups: ['sessions'] });
    const b = await call(w, 'ipc_spawn', { script: { steps: [{ listen: {} }] } }, asSession(a.session.id));
    await call(w, 'kill', { id: b.session.id }, asSession(a.session.id));
    const again = await call(w, 'ipc_close', { fd: b.lifecycleFd }, asSession(a.session.id));
    assert.equal(again.alreadyClosed, false);
  });
});
