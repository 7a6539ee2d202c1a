/**
 * ipc_list_streams pages past the kernel's default cap: a zone with more streams than one
 * page gives a cursor, and following it reaches every stream exactly once.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { call, forEachWarren } from '../helpers/warrens.ts';

forEachWarren(
  'ipc_list_streams paging',
  (t) => {
    it('more streams than the kernel default (500): the cursor reaches them all, once each', async () => {
      const w = await t.open();
      const names = Array.from({ length: 520 }, (_, i) => `room-${String(i).padStart(3, '0')}`);
      for (const name of names) await call(w, 'ipc_create_stream', { name });
      const seen: string[] = [];
      let after: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await call(w, 'ipc_list_streams', { limit: 200, ...(after ? { after } : {}) });
        seen.push(...page.streams.map((s: { name: string }) => s.name));
        if (!page.next) break;
        after = page.next;
      }
      assert.deepEqual(seen, names);
      const one = await call(w, 'ipc_list_streams', { limit: 1000 });
      assert.equal(one.streams.length, 520);
      assert.equal(one.next, null);
    });
  },
  ['sqlite'],
);
