/**
 * A node whose cluster lease has lapsed on its own clock writes nothing (issue 26), even in the
 * moment after a pause before its watchdog has fenced it: the writer asks `mayWrite` before
 * each batch and refuses every unit `unavailable`, but the node's own rejoin.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';

forEachStore('store: writes while the lease has lapsed', (target) => {
  it('are refused unavailable and write nothing; the rejoin still commits', async () => {
    const store = await target.open();
    try {
      let holds = false;
      store.writer.mayWrite = () => holds;
      const head = await store.log.head();
      const refused = store.writer.write(async (tx) => {
        await tx.db.insertInto('settings').values({ key: 'late', value: '1' }).execute();
        tx.append({ zone: 'z1', type: 'test.late', actor: 'kernel', payload: {} });
      });
      await assert.rejects(refused, (e: Error & { code?: string }) => e.code === 'unavailable');
      await assert.rejects(
        store.writer.append([{ zone: 'z1', type: 'test.late', actor: 'kernel', payload: {} }]),
      );
      const rejoin = await store.writer.write(
        async (tx) => {
          await tx.db.insertInto('settings').values({ key: 'rejoin', value: '1' }).execute();
          return 'joined';
        },
        { whileFenced: true },
      );
      assert.equal(rejoin, 'joined');
      const keys = async () =>
        (await store.reader.selectFrom('settings').select('key').execute()).map((r) => r.key);
      assert.ok(!(await keys()).includes('late'));
      assert.equal(await store.log.head(), head, 'no event appended');
      // Held again: writes go through.
      holds = true;
      await store.writer.write(async (tx) => {
        await tx.db.insertInto('settings').values({ key: 'held', value: '1' }).execute();
      });
      assert.ok((await keys()).includes('held'));
    } finally {
      await store.close();
    }
  });
});
