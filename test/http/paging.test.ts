import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type ApiResponse, startHttp } from '../helpers/http.ts';
import { forEachWarren } from '../helpers/warrens.ts';

forEachWarren('every list is paged', (t) => {
  it('streams, fds: a default limit, a cursor that walks the whole list once, in order', async () => {
    const h = await startHttp(t);
    for (let i = 0; i < 7; i++)
      assert.equal((await h.api('POST', '/v1/streams', { name: `room-${i}` })).status, 200);
    for (const [path, key] of [
      ['/v1/streams', 'streams'],
      ['/v1/fds', 'fds'],
    ] as const) {
      const all = (await h.api('GET', path)).json;
      assert.equal(all.next, null, path);
      const seen: string[] = [];
      let after: string | null = null;
      for (let pages = 0; ; pages++) {
        assert.ok(pages < 10, `${path}: the cursor does not end`);
        const r: ApiResponse = await h.api('GET', `${path}?limit=3${after ? `&after=${after}` : ''}`);
        assert.equal(r.status, 200, JSON.stringify(r.json));
        assert.ok(r.json[key].length <= 3);
        seen.push(...r.json[key].map((x: { id: string }) => x.id));
        after = r.json.next;
        if (after === null) break;
      }
      assert.deepEqual(
        seen,
        all[key].map((x: { id: string }) => x.id),
        path,
      );
    }
    const tooMany = await h.api('GET', '/v1/streams?limit=100000');
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.json.error.code, 'invalid_input');
  });
});
