import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { call, forEachWarren, op } from '../helpers/warrens.ts';
import { coordinatorWarren, rows, spawnBody } from './helpers.ts';

forEachWarren('coordinator agents', (target) => {
  describe('the agent routes', () => {
    it('spawns a warren session, pages, suspends, resumes and cascade-terminates with one revoke event each', async () => {
      const h = await coordinatorWarren(target);
      const spawned = await h.api(
        'POST',
        '/zones/default/agents',
        spawnBody({ capabilities: ['a', 'b'], session_sid: 'sid1' }),
      );
      assert.equal(spawned.status, 200, JSON.stringify(spawned.json));
      const root = spawned.json.agent;
      assert.equal(root.status, 'active');
      assert.equal(root.depth, 1);
      assert.deepEqual(root.capabilities, ['a', 'b']);
      // The same session is in `warren ps`.
      const ps = await call(h.warren, 'ps', {}, op);
      assert.ok(ps.sessions.some((s: { id: string }) => s.id === root.id));
      const c1 = (await h.api('POST', '/zones/default/agents', spawnBody({ parent_id: root.id }))).json.agent;
      const c2 = (await h.api('POST', '/zones/default/agents', spawnBody({ parent_id: root.id }))).json.agent;
      const g = (await h.api('POST', '/zones/default/agents', spawnBody({ parent_id: c1.id }))).json.agent;
      assert.equal(g.depth, 3);
      // Cursor pages cover every agent once.
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
        const page = await h.api('GET', `/zones/default/agents${q}`);
        assert.equal(page.status, 200);
        seen.push(...page.json.agents.map((a: { id: string }) => a.id));
        cursor = page.json.next;
      } while (cursor);
      assert.deepEqual(seen.sort(), [root.id, c1.id, c2.id, g.id].sort());
      const got = await h.api('GET', `/zones/default/agents/${c2.id}`);
      assert.equal(got.json.agent.parent_id, root.id);
      // Another zone does not see it.
      assert.equal((await h.api('GET', `/zones/other/agents/${c2.id}`)).status, 404);

      const sus = await h.api('POST', `/zones/default/agents/${c2.id}/suspend`);
      assert.equal(sus.json.agent.status, 'suspended');
      assert.equal((await call(h.warren, 'session_show', { id: c2.id })).session.status, 'suspended');
      const res = await h.api('POST', `/zones/default/agents/${c2.id}/resume`);
      assert.equal(res.json.agent.status, 'active');

      const del = await h.api('DELETE', `/zones/default/agents/${root.id}`);
      assert.equal(del.status, 200, JSON.stringify(del.json));
      assert.deepEqual([...del.json.terminated].sort(), [root.id, c1.id, c2.id, g.id].sort());
      for (const id of [root.id, c1.id, c2.id, g.id]) {
        assert.equal((await call(h.warren, 'session_show', { id })).session.status, 'stopped');
      }
      const events = (await rows(h, 'coordinator_outbox')).filter(
        (r) => r.topic === 'caracal.sessions.revoke',
      );
      assert.deepEqual(events.map((e) => e.key).sort(), [root.id, c1.id, c2.id, g.id].sort());
      // Deleting again terminates nothing more and writes no event.
      assert.deepEqual((await h.api('DELETE', `/zones/default/agents/${root.id}`)).json.terminated, []);
      assert.equal((await rows(h, 'coordinator_outbox')).length, 4);
    });

    it('refuses bad input and unknown ids with typed errors', async () => {
      const h = await coordinatorWarren(target);
      const bad = await h.api('POST', '/zones/default/agents', {});
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.code, 'invalid_input');
      assert.equal((await h.api('POST', '/zones/BAD!/agents', spawnBody())).status, 400);
      const orphan = await h.api('POST', '/zones/default/agents', spawnBody({ parent_id: 'ses_nope' }));
      assert.equal(orphan.status, 404);
      assert.equal((await h.api('POST', '/zones/default/agents/ses_nope/suspend')).status, 404);
      assert.equal((await h.api('DELETE', '/zones/default/agents/ses_nope')).status, 404);
      assert.equal((await rows(h, 'coordinator_agents')).length, 0);
    });
  });

  describe('spawn limits', () => {
    it('enforces depth and children with a typed 429 naming the limit', async () => {
      const h = await coordinatorWarren(target, {
        limits: { maxDepth: 2, maxChildren: 1, maxPerZone: 50, maxPerApplication: 200 },
      });
      const root = (await h.api('POST', '/zones/default/agents', spawnBody())).json.agent;
      const child = (await h.api('POST', '/zones/default/agents', spawnBody({ parent_id: root.id }))).json
        .agent;
      const second = await h.api('POST', '/zones/default/agents', spawnBody({ parent_id: root.id }));
      assert.equal(second.status, 429);
      assert.equal(second.json.error.code, 'limit_exceeded');
      assert.equal(second.json.error.details.limit, 'maxChildren');
      const deep = await h.api('POST', '/zones/default/agents', spawnBody({ parent_id: child.id }));
      assert.equal(deep.status, 429);
      assert.equal(deep.json.error.details.limit, 'maxDepth');
      // A refused spawn leaves no session behind.
      const ps = await call(h.warren, 'ps', { all: true }, op);
      assert.equal(ps.sessions.filter((s: { runtime: string }) => s.runtime === 'script').length, 2);
    });

    it('20 concurrent callers at the zone and application limits create exactly the limit', async () => {
      const h = await coordinatorWarren(target, {
        limits: { maxDepth: 10, maxChildren: 10, maxPerZone: 7, maxPerApplication: 5 },
      });
      const app = await Promise.all(
        Array.from({ length: 20 }, () => h.api('POST', '/zones/default/agents', spawnBody())),
      );
      assert.equal(app.filter((r) => r.status === 200).length, 5);
      assert.ok(
        app
          .filter((r) => r.status !== 200)
          .every((r) => r.status === 429 && r.json.error.details.limit === 'maxPerApplication'),
      );
      const zone = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          h.api('POST', '/zones/default/agents', spawnBody({ application_id: `other${i}` })),
        ),
      );
      assert.equal(zone.filter((r) => r.status === 200).length, 2);
      assert.ok(
        zone.filter((r) => r.status !== 200).every((r) => r.json.error.details.limit === 'maxPerZone'),
      );
      assert.equal((await rows(h, 'coordinator_agents')).length, 7);
    });
  });

  describe('Idempotency-Key', () => {
    it('creates once under 20 concurrent callers; a repeat is the original; another body is 422', async () => {
      const h = await coordinatorWarren(target);
      const headers = { 'idempotency-key': 'key-1' };
      const all = await Promise.all(
        Array.from({ length: 20 }, () => h.api('POST', '/zones/default/agents', spawnBody(), { headers })),
      );
      assert.ok(
        all.every((r) => r.status === 200),
        JSON.stringify(all.map((r) => r.json)),
      );
      const ids = new Set(all.map((r) => r.json.agent.id));
      assert.equal(ids.size, 1);
      assert.equal(all.filter((r) => r.json.created).length, 1);
      const again = await h.api('POST', '/zones/default/agents', spawnBody(), { headers });
      assert.deepEqual(again.json.agent, all[0]?.json.agent);
      const other = await h.api('POST', '/zones/default/agents', spawnBody({ ttl_seconds: 5 }), { headers });
      assert.equal(other.status, 422);
      assert.equal(other.json.error.code, 'idempotency_mismatch');
      assert.equal((await rows(h, 'coordinator_agents')).length, 1);
    });
  });
});
