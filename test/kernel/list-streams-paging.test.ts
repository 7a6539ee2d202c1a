/**
 * ipc_list_streams and ipc_list_fds page past the kernel's default cap: a zone with more
 * streams (a holder with more fds) than one page gives a cursor, and following it reaches
 * every one exactly once.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { call, forEachWarren, pages } from '../helpers/warrens.ts';

forEachWarren(
  'ipc_list_streams paging',
  (t) => {
    it('more streams than the kernel default (500): the cursor reaches them all, once each', async () => {
      const w = await t.open();
      const names = Array.from({ length: 520 }, (_, i) => `room-${String(i).padStart(3, '0')}`);
      for (const name of names) await call(w, 'ipc_create_stream', { name });
      const seen = (await pages(w, 'ipc_list_streams', 'streams', { limit: 200 })).flat();
      assert.deepEqual(
        seen.map((s: { name: string }) => s.name),
        names,
      );
      const one = await call(w, 'ipc_list_streams', { limit: 1000 });
      assert.equal(one.streams.length, 520);
      assert.equal(one.next, null);
    });

    it('more fds than the kernel default (500): the cursor reaches them all, in fd order, once each', async () => {
      const w = await t.open();
      // Each room's creator holds an fd on it: the operator ends up with 520 fds.
      for (let i = 0; i < 520; i++) await call(w, 'ipc_create_stream', { name: `room-${i}` });
      const all = (await call(w, 'ipc_list_fds', { limit: 1000 })).fds as Array<{ id: string; fd: number }>;
      assert.equal(all.length, 520);
      const seen = (await pages(w, 'ipc_list_fds', 'fds', { limit: 200 }))
        .flat()
        .map((f: { fd: number }) => f.fd);
      assert.deepEqual(
        seen,
        all.map((f) => f.fd),
      );
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => a - b),
      );
      await assert.rejects(call(w, 'ipc_list_fds', { after: 'fd_nope' }), { code: 'invalid_input' });
    });
  },
  ['sqlite'],
);
