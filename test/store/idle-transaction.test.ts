/**
 * A node paused mid-transaction must not commit when it resumes (issue 26: a SIGSTOPped node
 * wrote rows for sessions taken from it, after its lease ended). In a cluster the writer bounds
 * how long each transaction may sit idle (cluster.ts sets `idleLimitMs` from the node's fence);
 * PostgreSQL ends one idle longer, and what it wrote never lands.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachStore } from '../helpers/stores.ts';

forEachStore(
  'store: a transaction left idle past its bound',
  (target) => {
    it('is ended by the server; its writes never land, and the next unit commits', async () => {
      const store = await target.open();
      try {
        store.writer.idleLimitMs = () => 200;
        // Begins, writes, then stalls (as a paused process would) past the bound.
        const stalled = store.writer.write(async (tx) => {
          await tx.db.insertInto('settings').values({ key: 'stalled', value: '1' }).execute();
          await sleep(800);
          return 'committed';
        });
        await assert.rejects(stalled);
        const keys = async () =>
          (await store.reader.selectFrom('settings').select('key').execute()).map((r) => r.key);
        assert.ok(!(await keys()).includes('stalled'), 'the stalled unit wrote nothing');
        // The writer replaces its connection: the next unit, quick, commits under the same bound.
        await store.writer.write(async (tx) => {
          await tx.db.insertInto('settings').values({ key: 'quick', value: '1' }).execute();
        });
        assert.ok((await keys()).includes('quick'));
        // Unbounded (no cluster), the same stall commits.
        store.writer.idleLimitMs = undefined;
        const slow = await store.writer.write(async (tx) => {
          await tx.db.insertInto('settings').values({ key: 'slow', value: '1' }).execute();
          await sleep(400);
          return 'committed';
        });
        assert.equal(slow, 'committed');
        assert.ok((await keys()).includes('slow'));
      } finally {
        await store.close();
      }
    });
  },
  { backends: ['postgres'] },
);
