import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';
import { type Ev, Node, within } from './harness.ts';

/**
 * Pushed input is acknowledged when the turn that takes it ends, not when it is handed over
 * (docs/concepts.md, "Cursors"): a server SIGKILLed between the hand-over and the end of that
 * turn hands the same message over again after the restart. A script agent takes the input,
 * then blocks in a read on a room the test controls, so the kill lands inside the turn by
 * construction, not by timing.
 */

/** Seqs a session's `session.input` events took, in log order. */
const inputSeqs = (events: Ev[], after = 0): number[] =>
  events
    .filter((e) => e.type === 'session.input' && e.seq > after)
    .flatMap((e) => (e.payload.seqs as number[] | undefined) ?? []);

forEachStore('input handed over, then the server is SIGKILLed', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('is delivered again after the restart: the turn that took it never ended', async () => {
    const node = new Node(target);
    nodes.push(node);
    const s1 = await node.start();
    const spawn = async (script: unknown, title: string) =>
      (
        await s1.api<{ session: { id: string } }>('POST', '/v1/sessions', {
          runtime: 'script',
          script,
          title,
        })
      ).session.id;
    // Takes one input, then blocks (busy, mid-turn) on fd 3 until the test writes to the room;
    // then stands idle taking whatever comes.
    const id = await spawn({ steps: [{ wait: {} }, { read: { fd: 3 } }, { listen: {} }] }, 'mid-turn');
    // A bystander whose turns end: its acknowledgement, once persisted, shows every earlier one is.
    const bystander = await spawn({ steps: [{ listen: {} }] }, 'bystander');
    await s1.until(id, (x) => x.status === 'idle');
    await s1.until(bystander, (x) => x.status === 'idle');
    const room = await s1.api<{ fd: number }>('POST', '/v1/streams', { name: `gate-${id}` });
    const attached = await s1.api<{ fd: number | null }>('POST', `/v1/streams/gate-${id}/attach`, {
      session: id,
      permission: 'r',
      mode: 'sync',
    });
    assert.equal(attached.fd, 3, 'the room is the agent’s fd 3');

    const first = (await s1.api<{ seq: number }>('POST', `/v1/sessions/${id}/send`, { text: 'first' })).seq;
    // Handed over: the agent reported the input that took it, and is now blocked in its read.
    await within(30_000, 'the agent took the first input', async () =>
      inputSeqs(await s1.events(id)).includes(first),
    );
    // Cursors are persisted in batches (kernel.cursorFlushMs): wait for a later acknowledgement
    // (the bystander's turn) to reach the database, so an acknowledgement of `first` made at
    // the hand-over would have reached it too. Then the promise itself: not acknowledged.
    const later = (await s1.api<{ seq: number }>('POST', `/v1/sessions/${bystander}/send`, { text: 'x' }))
      .seq;
    const cursor = (holder: string) =>
      node.withStore(async (store) => {
        const row = await store.reader
          .selectFrom('fds')
          .select('cursor')
          .where('holder', '=', holder)
          .where('num', '=', 0)
          .executeTakeFirstOrThrow();
        return Number(row.cursor);
      });
    await within(
      30_000,
      "the bystander's acknowledgement persisted",
      async () => (await cursor(bystander)) >= later,
    );
    assert.ok((await cursor(id)) < first, 'input taken by a turn that has not ended is not acknowledged');
    await s1.signal('SIGKILL');
    const lastBefore = await node.withStore(async (store) => {
      const row = await store.reader
        .selectFrom('events')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .executeTakeFirstOrThrow();
      return Number(row.seq);
    });

    const s2 = await node.start();
    await s2.until(id, (x) => x.status !== 'suspended' && x.status !== 'stopped');
    // Let the resumed read return; the agent goes idle and takes what is due.
    await s2.api('POST', `/v1/fds/${room.fd}/write`, { message: 'go' });
    const marker = (await s2.api<{ seq: number }>('POST', `/v1/sessions/${id}/send`, { text: 'marker' })).seq;
    // Quiescent point: inputs are handed over in seq order, so once the marker is taken,
    // anything due before it has been taken too.
    await within(30_000, 'the agent took the marker', async () =>
      inputSeqs(await s2.events(id), lastBefore).includes(marker),
    );
    const taken = inputSeqs(await s2.events(id), lastBefore);
    assert.ok(
      taken.includes(first),
      `the first input (seq ${first}) is handed over again after the restart; taken since: ${JSON.stringify(taken)}`,
    );
  });
});
