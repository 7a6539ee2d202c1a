import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { NewEvent } from '../../src/store/events.ts';
import { dropExpired } from '../../src/store/retention.ts';
import { manualClock } from '../helpers/clock.ts';
import { forEachStore } from '../helpers/stores.ts';

const T0 = 1_700_000_000_000;
const msg = (stream: string): NewEvent => ({
  zone: 'z',
  type: 'stream.message',
  actor: 'a',
  stream_id: stream,
});
const other = (): NewEvent => ({ zone: 'z', type: 'agent.output', actor: 'a', session_id: 's' });

forEachStore('retention', (target) => {
  it('drops expired events except messages an open fd has not been given; bounded per call', async () => {
    const clock = manualClock(T0);
    const store = await target.open({ clock });
    // Old: 10 outputs, 10 messages on "owed" (an open fd's cursor sits after the 4th), 10 on "done".
    const old = await store.writer.append([
      ...Array.from({ length: 10 }, other),
      ...Array.from({ length: 10 }, () => msg('owed')),
      ...Array.from({ length: 10 }, () => msg('done')),
    ]);
    const owed = old.slice(10, 20).map((r) => r.seq);
    clock.set(T0 + 10_000);
    await store.writer.append([other(), msg('owed')]);
    await store.writer.write(async (tx) => {
      for (const [id, stream, cursor, closed] of [
        ['fd1', 'owed', owed[3]!, null],
        ['fd2', 'done', 0, T0],
      ] as const) {
        await tx.db
          .insertInto('fds')
          .values({
            id,
            zone: 'z',
            holder: id,
            num: 3,
            stream_id: stream,
            perm: 'r',
            mode: 'async',
            cursor,
            owned: 0,
            spawned: 0,
            created_at: T0,
            closed_at: closed,
          })
          .execute();
      }
    });
    const seqs = async () =>
      (await store.reader.selectFrom('events').select('seq').orderBy('seq').execute()).map((r) =>
        Number(r.seq),
      );
    const before = await seqs();

    // Bounded: 7 per call, oldest first.
    const first = await store.writer.write((tx) => dropExpired(tx, T0 + 5_000, 7));
    assert.equal(first.deleted, 7);
    assert.equal(first.upToSeq, before[6]);

    const second = await store.writer.write((tx) => dropExpired(tx, T0 + 5_000, 1000));
    // 10 outputs + 4 given messages on "owed" + 10 on "done" (its only fd is closed) = 24.
    assert.equal(first.deleted + second.deleted, 24);
    const left = await seqs();
    assert.deepEqual(left.slice(0, 6), owed.slice(4));
    assert.equal(left.length, before.length - 24);

    // Nothing more is due: an idle call deletes nothing.
    const third = await store.writer.write((tx) => dropExpired(tx, T0 + 5_000));
    assert.deepEqual(third, { deleted: 0, upToSeq: 0 });
  });
});
