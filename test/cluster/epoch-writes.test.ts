import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { soloNode } from '../../src/kernel/node.ts';
import { ownerCondition } from '../../src/kernel/ownership.ts';
import { flushCursors } from '../../src/store/cursors.ts';
import type { Store } from '../../src/store/store.ts';
import { forEachStore } from '../helpers/stores.ts';
import { addSession } from './rows.ts';

/**
 * Issue 26, item 4: a cursor flush is conditioned on the session's owner in the same statement.
 * A node that lost a session (its row names another owner) cannot move the session's fd
 * cursors; an operator's fds and a node alone (no owner given)
 * are unaffected. On PostgreSQL the check locks the session row: a takeover committing while
 * the flush runs is waited for and seen, not read from a snapshot taken before it.
 */
forEachStore('cluster: session writes are conditioned on the owner epoch', (target) => {
  it('moves no cursor of a session another node owns', async () => {
    const store = await target.open();
    await addSession(store, 'ses_a', 'node-a', 3);
    await addFd(store, 'fd_s', 'ses_a');
    await addFd(store, 'fd_o', 'operator:root');
    const a3 = { node: 'node-a' };

    await store.writer.write((tx) => flushCursors(tx, [{ id: 'fd_s', cursor: 5 }], a3));
    assert.equal(await cursor(store, 'fd_s'), 5, 'its owner moves it');

    // The session was handed to node-b: node-a's late flush is refused, the operator's is not.
    await setOwner(store, 'ses_a', 'node-b', 1);
    await store.writer.write((tx) =>
      flushCursors(
        tx,
        [
          { id: 'fd_s', cursor: 9 },
          { id: 'fd_o', cursor: 9 },
        ],
        a3,
      ),
    );
    assert.equal(await cursor(store, 'fd_s'), 5, 'a node that lost the session moved its cursor');
    assert.equal(await cursor(store, 'fd_o'), 9);

    // Back to node-a under an earlier epoch of its own (not adopted again yet after a rejoin):
    // nobody else's, so it moves; and a session owned by nobody (init, a runner's that waits).
    await setOwner(store, 'ses_a', 'node-a', 2);
    await store.writer.write((tx) => flushCursors(tx, [{ id: 'fd_s', cursor: 9 }], a3));
    assert.equal(await cursor(store, 'fd_s'), 9);
    await setOwner(store, 'ses_a', null, null);
    await store.writer.write((tx) => flushCursors(tx, [{ id: 'fd_s', cursor: 10 }], a3));
    assert.equal(await cursor(store, 'fd_s'), 10);

    // Alone (no owner): no condition, still only forward.
    await store.writer.write((tx) => flushCursors(tx, [{ id: 'fd_s', cursor: 12 }], null));
    assert.equal(await cursor(store, 'fd_s'), 12);
    await store.writer.write((tx) => flushCursors(tx, [{ id: 'fd_s', cursor: 11 }], null));
    assert.equal(await cursor(store, 'fd_s'), 12);
  });

  it("an agent's call through a node that lost its session writes nothing (owner condition)", async () => {
    const store = await target.open();
    await addSession(store, 'ses_c', 'node-a', 3);
    const nodeA = { ...soloNode('node-a'), epoch: 3, clustered: true };
    const event = { zone: 'default', type: 'stream.message', actor: 'ses_c', session_id: 'ses_c' };
    const count = async () =>
      Number(
        (
          await store.reader
            .selectFrom('events')
            .select((e) => e.fn.countAll().as('n'))
            .where('actor', '=', 'ses_c')
            .executeTakeFirstOrThrow()
        ).n,
      );
    // Every unit queued during the call is conditioned, an append-only one included.
    const call = () =>
      store.writer.conditions.run(ownerCondition(nodeA, 'ses_c'), async () => {
        await store.writer.append([event]);
        await store.writer.write(async (tx) => {
          tx.append(event);
        });
      });
    await call();
    assert.equal(await count(), 2, 'its owner writes');
    await setOwner(store, 'ses_c', 'node-b', 1);
    await assert.rejects(call(), /not run by this node/);
    assert.equal(await count(), 2, 'a node that lost the session wrote for it');
    // Its own under an earlier epoch (not adopted again yet): nobody else's, so it writes.
    await setOwner(store, 'ses_c', 'node-a', 2);
    await call();
    assert.equal(await count(), 4, 'a session still its own under an older epoch');
    // Fenced (epoch 0): nothing either, even for a session still recorded as its own.
    await setOwner(store, 'ses_c', 'node-a', 3);
    nodeA.epoch = 0;
    await assert.rejects(call(), /not run by this node/);
    assert.equal(await count(), 4);
    // Work queued after the call returned is not conditioned.
    nodeA.epoch = 3;
    await setOwner(store, 'ses_c', 'node-b', 1);
    let later: Promise<unknown> = Promise.resolve();
    await store.writer.conditions.run(ownerCondition(nodeA, 'ses_c'), async () => {
      later = new Promise((r) => setImmediate(r)).then(() =>
        store.writer.append([{ ...event, actor: 'kernel' }]),
      );
    });
    await later;
  });

  if (target.kind === 'postgres') {
    it('a takeover committing during the flush is seen: the flush waits for it and is refused', async () => {
      const location = target.location();
      const mine = await target.open({ location });
      const theirs = await target.open({ location });
      await addSession(mine, 'ses_b', 'node-a', 3);
      await addFd(mine, 'fd_b', 'ses_b');
      // The other node's takeover: the row is updated, its transaction not committed yet.
      let commit!: () => void;
      const held = new Promise<void>((r) => {
        commit = r;
      });
      let updated!: () => void;
      const inTx = new Promise<void>((r) => {
        updated = r;
      });
      const takeover = theirs.writer.write(async (tx) => {
        await tx.db
          .updateTable('sessions')
          .set({ owner_node: 'node-b', owner_epoch: 1, status: 'suspended' })
          .where('id', '=', 'ses_b')
          .execute();
        updated();
        await held;
      });
      try {
        await inTx;
        let flushed = false;
        const flush = mine.writer
          .write((tx) => flushCursors(tx, [{ id: 'fd_b', cursor: 7 }], { node: 'node-a' }))
          .then(() => {
            flushed = true;
          });
        // The flush cannot finish while the takeover holds the row (it waits on its lock).
        await waitForLockWait(mine);
        assert.equal(flushed, false);
        commit();
        await takeover;
        await flush;
        assert.equal(
          await cursor(mine, 'fd_b'),
          0,
          'the flush moved a cursor of a session taken over under it',
        );
      } finally {
        commit();
        await takeover.catch(() => {});
      }
    });
  }
});

/** Until a connection waits on a lock in a cursor flush (this one, behind the takeover). */
async function waitForLockWait(store: Store): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const r = await sql<{ n: string }>`select count(*) as n from pg_stat_activity
      where wait_event_type = 'Lock' and query like ${'update "fds"%'} and pid <> pg_backend_pid()`.execute(
      store.reader,
    );
    if (Number(r.rows[0]?.n ?? 0) > 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the flush never waited on the takeover’s lock');
}

async function setOwner(store: Store, id: string, owner: string | null, epoch: number | null): Promise<void> {
  await store.writer.write(async (tx) => {
    await tx.db
      .updateTable('sessions')
      .set({ owner_node: owner, owner_epoch: epoch })
      .where('id', '=', id)
      .execute();
  });
}

async function addFd(store: Store, id: string, holder: string): Promise<void> {
  await store.writer.write(async (tx) => {
    await tx.db
      .insertInto('fds')
      .values({
        id,
        zone: 'default',
        holder,
        num: 3,
        stream_id: 'st',
        perm: 'r',
        mode: 'async',
        cursor: 0,
        owned: 0,
        spawned: 0,
        created_at: 0,
        closed_at: null,
      })
      .execute();
  });
}

async function cursor(store: Store, id: string): Promise<number> {
  const r = await store.reader
    .selectFrom('fds')
    .select('cursor')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return Number(r.cursor);
}
