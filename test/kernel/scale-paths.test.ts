import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Core } from '../../src/kernel/core.ts';
import { soloNode } from '../../src/kernel/node.ts';
import { ReportQueue } from '../../src/kernel/reports.ts';
import { silentLog } from '../../src/util/log.ts';
import { call, forEachWarren, idleScript, op, until, waitStatus } from '../helpers/warrens.ts';

/** The paths reworked so their cost follows what changed, not the number of sessions or fds. */
forEachWarren('scale paths', (t) => {
  it('fd lists page with limit/after and count what is pending on every fd of a page at once', async () => {
    const w = await t.open();
    const rooms: number[] = [];
    for (let i = 0; i < 5; i++) rooms.push((await call(w, 'streams_create', { name: `r${i}` })).fd);
    // Only others' messages are due on a room without self-echo: write as a child session.
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    await waitStatus(w, a.session.id, 'idle');
    await call(w, 'streams_attach', {
      session: a.session.id,
      stream: 'r1',
      mode: 'detach',
      permission: 'rw',
    });
    const aFds = await w.kernel.listFds({
      kind: 'session',
      sessionId: a.session.id,
      zone: 'default',
      depth: 1,
    });
    const onR1 = aFds.find((f) => f.streamName === 'r1');
    assert.ok(onR1);
    const asA = { kind: 'session' as const, sessionId: a.session.id, zone: 'default', depth: 1 };
    for (let i = 0; i < 3; i++) await w.kernel.write(asA, onR1.fd, `m${i}`);

    const all = await w.kernel.listFds(op);
    const r1 = all.find((f) => f.streamName === 'r1');
    assert.equal(r1?.pending, 3);
    assert.equal(all.find((f) => f.streamName === 'r0')?.pending, 0);

    // A read moves the in-memory cursor ahead of the table's: the count follows it.
    await call(w, 'ipc_read', { fd: r1?.fd, limit: 2 });
    assert.equal((await w.kernel.listFds(op)).find((f) => f.streamName === 'r1')?.pending, 1);

    const first = await w.kernel.listFds(op, undefined, { limit: 2 });
    assert.equal(first.length, 2);
    const rest = await w.kernel.listFds(op, undefined, { after: first.at(-1)?.fd ?? 0 });
    assert.deepEqual(
      [...first, ...rest].map((f) => f.fd),
      all.map((f) => f.fd),
    );

    const streams = await w.kernel.listStreams(op, { limit: 3 });
    assert.equal(streams.length, 3);
    const more = await w.kernel.listStreams(op, { after: streams.at(-1)?.id ?? '' });
    assert.deepEqual(
      [...streams, ...more].map((s) => s.name),
      ['r0', 'r1', 'r2', 'r3', 'r4'],
    );
    assert.equal(streams.find((s) => s.name === 'r1')?.bufferDepth, 1);
  });

  it('a top-level session going idle writes no SIGCHLD to init; stopping still does', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: { steps: [{ say: 'hi' }, { wait: {} }] } });
    await waitStatus(w, a.session.id, 'idle');
    await call(w, 'send', { id: a.session.id, text: 'go' });
    await waitStatus(w, a.session.id, 'stopped');
    const signals = (await call(w, 'events', { type: 'signal' })).events.filter(
      (e: { payload: { child?: string } }) => e.payload.child === a.session.id,
    );
    assert.deepEqual(
      signals.map((e: { payload: { signal: string; status: string } }) => [
        e.payload.signal,
        e.payload.status,
      ]),
      [['SIGCHLD', 'stopped']],
    );
  });

  it('reconcile: a live session whose agent is gone is found from the change (alone), started again by the backstop (in a cluster)', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    await waitStatus(w, a.session.id, 'idle');
    await w.kernel.reconcile(); // the first tick sweeps everything
    // Status says idle, but no agent runs it here: as after an exit that failed to record.
    await call(w, 'suspend', { id: a.session.id });
    await waitStatus(w, a.session.id, 'suspended');
    await w.store.writer.write(async (tx) => {
      await tx.db.updateTable('sessions').set({ status: 'running' }).where('id', '=', a.session.id).execute();
      tx.append({
        zone: 'default',
        type: 'session.status',
        actor: 'kernel',
        session_id: a.session.id,
        payload: { from: 'suspended', to: 'running' },
      });
    });
    await w.kernel.reconcile();
    if (!w.kernel.node.clustered) {
      await waitStatus(w, a.session.id, 'suspended');
      return;
    }
    // In a cluster (every PostgreSQL warren is one, of one node here) this node's session is
    // started again instead, by the adopt backstop once two ticks found it without a process
    // (docs/scaling.md): after a fence or an outage every session is in this state.
    await w.kernel.reconcile();
    await until(async () => w.kernel.runsHere(a.session.id), 10_000, 'its agent to be started again');
    await waitStatus(w, a.session.id, 'idle');
  });

  it('reports share a write unit; one that fails fails alone and the others are recorded in order', async () => {
    const w = await t.open();
    const a = await call(w, 'ipc_spawn', { script: idleScript });
    const b = await call(w, 'ipc_spawn', { script: idleScript });
    const q = new ReportQueue({ store: w.store, log: silentLog, node: soloNode('test') } as unknown as Core);
    const note = (id: string, n: number) =>
      q.apply(id, async (tx) => {
        tx.append({ zone: 'default', type: 'session.note', actor: id, session_id: id, payload: { n } });
      });
    const results = await Promise.allSettled([
      note(a.session.id, 1),
      q.apply(a.session.id, async () => {
        throw new Error('bad report');
      }),
      note(a.session.id, 2),
      note(b.session.id, 3),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    await q.drained();
    const notes = (await call(w, 'events', { type: 'session.note' })).events
      .sort((x: { seq: number }, y: { seq: number }) => x.seq - y.seq)
      .map((e: { payload: { n: number } }) => e.payload.n);
    // Session a's in the order made; b's (written beside them) anywhere.
    assert.deepEqual(
      notes.filter((n: number) => n !== 3),
      [1, 2],
    );
    assert.ok(notes.includes(3));
  });
});
