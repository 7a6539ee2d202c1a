import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { forEachWarren } from '../helpers/warrens.ts';

forEachWarren(
  'operator keys',
  (target) => {
    describe('warren keys create|list|revoke', () => {
      it('creates a key that works, lists without secrets, revokes it, and keeps the last one', async () => {
        const h = await startHttp(target);
        const created = await h.api('POST', '/v1/keys', { name: 'ci' });
        assert.equal(created.status, 200, JSON.stringify(created.json));
        const ci = created.json.key as string;
        assert.match(ci, /^wk_/);
        assert.equal((await h.api('GET', '/v1/sessions', undefined, { auth: ci })).status, 200);
        const listed = await h.api('GET', '/v1/keys');
        assert.deepEqual(
          listed.json.keys.map((k: { name: string }) => k.name),
          ['admin', 'ci'],
        );
        assert.ok(!JSON.stringify(listed.json).includes(ci.slice(3)));
        const revoked = await h.api('DELETE', `/v1/keys/${created.json.id}`);
        assert.equal(revoked.json.revoked, true);
        assert.equal((await h.api('GET', '/v1/sessions', undefined, { auth: ci })).status, 401);
        const admin = listed.json.keys.find((k: { name: string }) => k.name === 'admin');
        const last = await h.api('DELETE', `/v1/keys/${admin.id}`);
        assert.equal(last.status, 409);
        assert.equal((await h.api('POST', '/v1/keys', { name: 'jwt:x' })).status, 400);
      });
    });
  },
  ['sqlite'],
);
