import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { asSession, call, forEachWarren, until } from '../helpers/warrens.ts';
import { coordinatorWarren, rows } from './helpers.ts';
import { REDIS_URL, redisDelete, redisEntries, unique } from './sinks.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the tests that read them
type Any = any;

const Z = '/zones/default';

/** An agent that registers a service, heartbeats, answers one invocation, then stays. */
const serving = {
  script: {
    steps: [
      {
        call: {
          syscall: 'service_register',
          input: {
            zoneId: 'default',
            agentId: '$self.id',
            endpoint_url: 'http://127.0.0.1:9/rpc',
            protocol_versions: ['1'],
          },
          as: 'svc',
        },
      },
      {
        call: {
          syscall: 'service_heartbeat',
          input: { zoneId: 'default', agentId: '$self.id', serviceId: '$svc.service.id', health: 'healthy' },
        },
      },
      { wait: { match: '\\[INVOCATION\\]' } },
      { call: { syscall: 'invocation_list', input: { zoneId: 'default', status: 'running' }, as: 'mine' } },
      {
        call: {
          syscall: 'invocation_complete',
          input: {
            zoneId: 'default',
            id: '$mine.invocations.0.id',
            status: 'succeeded',
            result: { echo: 'pong' },
          },
        },
      },
      { listen: {} },
    ],
  },
};

forEachWarren('coordinator services, invocations and delegations', (target) => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanups.splice(0)) await c().catch(() => {});
  });

  const fast = (extra: Record<string, unknown> = {}) => ({
    deadlineSweepIntervalMs: 40,
    outbox: { intervalMs: 40 },
    ...extra,
  });

  describe('invocations', () => {
    it('a script agent registers, heartbeats, receives an invocation on its stdin and completes it', async () => {
      const h = await coordinatorWarren(target, fast());
      const agent = (
        await h.api('POST', `${Z}/agents`, { application_id: 'app', runtime: 'script', config: serving })
      ).json.agent;
      const svc = await until(
        async () =>
          (await h.api('GET', `${Z}/agents/${agent.id}/services`)).json.services.find(
            (s: Any) => s.health === 'healthy',
          ),
        10_000,
        'the service to be registered and healthy',
      );
      const inv = await h.api('POST', `${Z}/invocations`, {
        service_id: svc.id,
        idempotency_key: 'k1',
        method: 'ping',
        params: { n: 1 },
        timeout_ms: 10_000,
      });
      assert.equal(inv.status, 200, JSON.stringify(inv.json));
      const done = await until(
        async () => {
          const r = (await h.api('GET', `${Z}/invocations/${inv.json.invocation.id}`)).json.invocation;
          return r.status === 'succeeded' ? r : null;
        },
        10_000,
        'the invocation to succeed',
      );
      assert.deepEqual(done.result, { echo: 'pong' });
      assert.equal(done.attempts, 1);
      assert.ok(done.deadline_at);
      // The agent saw it as a message on its fds.
      const seen = await call(h.warren, 'session_events', { id: agent.id, limit: 1000 });
      assert.ok(seen.events.some((e: Any) => String(e.payload?.text ?? '').includes(inv.json.invocation.id)));
      // Only the target completes: an operator cannot (sessions only), another session is refused.
      const other = (await h.api('POST', `${Z}/agents`, { application_id: 'app' })).json.agent;
      const inv2 = (
        await h.api('POST', `${Z}/invocations`, { service_id: svc.id, idempotency_key: 'k2', method: 'x' })
      ).json.invocation;
      const byOp = await h.api('POST', `${Z}/invocations/${inv2.id}/complete`, { status: 'succeeded' });
      assert.equal(byOp.status, 403);
      await until(
        async () => (await h.api('GET', `${Z}/invocations/${inv2.id}`)).json.invocation.status === 'running',
      );
      await assert.rejects(
        call(
          h.warren,
          'invocation_complete',
          { zoneId: 'default', id: inv2.id, status: 'succeeded' },
          asSession(other.id),
        ),
        (e: Any) => e.code === 'forbidden',
      );
    });

    it('50 concurrent duplicate enqueues make one record; deadlines time out; retries end dead', async () => {
      const h = await coordinatorWarren(target, fast());
      const agent = (await h.api('POST', `${Z}/agents`, { application_id: 'app' })).json.agent;
      const svc = (
        await h.api('POST', `${Z}/agents/${agent.id}/services`, { endpoint_url: 'http://127.0.0.1:9/a' })
      ).json.service;
      const storm = await Promise.all(
        Array.from({ length: 50 }, () =>
          h.api('POST', `${Z}/invocations`, {
            service_id: svc.id,
            idempotency_key: 'same',
            method: 'm',
            timeout_ms: 60_000,
          }),
        ),
      );
      assert.ok(storm.every((r) => r.status === 200));
      assert.equal(new Set(storm.map((r) => r.json.invocation.id)).size, 1);
      assert.equal(storm.filter((r) => r.json.created).length, 1);
      const n = (
        await (h.warren.store.reader as Any).selectFrom('coordinator_invocations').selectAll().execute()
      ).length;
      assert.equal(n, 1);

      // Nobody answers: one attempt times out; a retried one ends dead after its attempts.
      const once = (
        await h.api('POST', `${Z}/invocations`, {
          service_id: svc.id,
          idempotency_key: 't1',
          method: 'm',
          timeout_ms: 100,
        })
      ).json.invocation;
      const retried = (
        await h.api('POST', `${Z}/invocations`, {
          service_id: svc.id,
          idempotency_key: 't2',
          method: 'm',
          timeout_ms: 100,
          retry_policy: { max_attempts: 3, initial_backoff_ms: 20, max_backoff_ms: 50 },
        })
      ).json.invocation;
      const status = async (id: string) => (await h.api('GET', `${Z}/invocations/${id}`)).json.invocation;
      const t = await until(
        async () => ((await status(once.id)).status === 'timed_out' ? status(once.id) : null),
        10_000,
        'timed_out',
      );
      assert.equal(t.attempts, 1);
      const d = await until(
        async () => ((await status(retried.id)).status === 'dead' ? status(retried.id) : null),
        10_000,
        'dead',
      );
      assert.equal(d.attempts, 3);
      assert.equal(d.error.code, 'timed_out');
      // A finished invocation cannot be canceled; a pending one can.
      assert.equal((await h.api('POST', `${Z}/invocations/${d.id}/cancel`)).status, 409);
    });
  });

  describe('services', () => {
    it('a silent service becomes unhealthy by itself (an event), and recovers on its next heartbeat', async () => {
      const h = await coordinatorWarren(target, fast({ healthSilenceMs: 200 }));
      const agent = (await h.api('POST', `${Z}/agents`, { application_id: 'app' })).json.agent;
      const svc = (
        await h.api('POST', `${Z}/agents/${agent.id}/services`, {
          endpoint_url: 'http://127.0.0.1:9/a',
          health: 'healthy',
        })
      ).json.service;
      const dup = await h.api('POST', `${Z}/agents/${agent.id}/services`, {
        endpoint_url: 'http://127.0.0.1:9/a',
      });
      assert.equal(dup.status, 409);
      const patched = await h.api('PATCH', `${Z}/agents/${agent.id}/services/${svc.id}`, {
        metadata: { v: 2 },
      });
      assert.deepEqual(patched.json.service.metadata, { v: 2 });
      await until(
        async () =>
          (await h.api('GET', `${Z}/agents/${agent.id}/services`)).json.services[0].health === 'unhealthy',
        5000,
        'silence to make it unhealthy',
      );
      const hb = await h.api('POST', `${Z}/agents/${agent.id}/services/${svc.id}/heartbeat`);
      assert.equal(hb.json.service.health, 'healthy');
      const health = (await rows(h, 'coordinator_outbox')).filter(
        (r) => r.topic === 'caracal.services.health',
      );
      const moves = health.map((r) => JSON.parse(r.payload)).map((p) => `${p.from}>${p.to}`);
      assert.deepEqual(moves, ['healthy>unhealthy', 'unhealthy>healthy']);
    });
  });

  describe('delegations', () => {
    it('a chain narrows only; revoking its root revokes what derives from it, seen on the Redis stream', async () => {
      const prefix = `${unique('t')}.`;
      cleanups.push(() => redisDelete(`${prefix}caracal.policy.invalidate`));
      const h = await coordinatorWarren(
        target,
        fast({ outbox: { intervalMs: 40, topicPrefix: prefix, sinks: [{ type: 'redis', url: REDIS_URL }] } }),
      );
      const [a, b, c, d] = await Promise.all(
        [1, 2, 3, 4].map(
          async () => (await h.api('POST', `${Z}/agents`, { application_id: 'app' })).json.agent.id,
        ),
      );
      const edge = async (s: string, t: string, constraints: Any) =>
        h.api('POST', `${Z}/delegations`, { source_agent_id: s, target_agent_id: t, constraints });
      const ab = await edge(a, b, { scopes: ['read', 'write'], resources: ['doc:1', 'doc:2'] });
      assert.equal(ab.status, 200, JSON.stringify(ab.json));
      const wide = await edge(b, c, { scopes: ['read', 'admin'], resources: ['doc:1'] });
      assert.equal(wide.status, 403);
      assert.equal(wide.json.error.code, 'widens_grant');
      assert.equal((await edge(b, c, { scopes: ['read'] })).status, 403, 'all resources is wider than two');
      const bc = await edge(b, c, { scopes: ['read'], resources: ['doc:1'] });
      assert.equal(bc.json.delegation.parent_edge_id, ab.json.delegation.id);
      // Seed 003's constraints_json is the same field (as an object or its JSON text), and is
      // held to the same narrowing.
      const seedWide = await h.api('POST', `${Z}/delegations`, {
        source_agent_id: c,
        target_agent_id: d,
        constraints_json: JSON.stringify({ scopes: ['write'], resources: ['doc:1'] }),
      });
      assert.equal(seedWide.status, 403, JSON.stringify(seedWide.json));
      const cd = await h.api('POST', `${Z}/delegations`, {
        source_agent_id: c,
        target_agent_id: d,
        constraints_json: { scopes: ['read'], resources: ['doc:1'] },
      });
      assert.equal(cd.status, 200, JSON.stringify(cd.json));
      assert.deepEqual(cd.json.delegation.constraints, { scopes: ['read'], resources: ['doc:1'] });
      const both = await h.api('POST', `${Z}/delegations`, {
        source_agent_id: c,
        target_agent_id: d,
        constraints: { scopes: ['read'] },
        constraints_json: { scopes: ['read'] },
      });
      assert.equal(both.status, 400);
      const revoked = await h.api('DELETE', `${Z}/delegations/${ab.json.delegation.id}`);
      assert.deepEqual(
        [...revoked.json.revoked].sort(),
        [ab.json.delegation.id, bc.json.delegation.id, cd.json.delegation.id].sort(),
      );
      // Revoked authority is gone: the middle of the chain cannot delegate any more.
      assert.equal((await edge(b, d, { scopes: ['read'], resources: ['doc:1'] })).status, 403);
      const listed = (await h.api('GET', `${Z}/delegations`)).json.delegations;
      assert.ok(listed.every((e: Any) => e.status === 'revoked'));
      const stream = await until(
        async () => {
          const es = await redisEntries(`${prefix}caracal.policy.invalidate`);
          return es.filter((e) => e.type === 'delegation.revoked').length === 3 ? es : null;
        },
        10_000,
        'three revoke events on the stream',
      );
      assert.deepEqual(
        stream
          .filter((e) => e.type === 'delegation.revoked')
          .map((e) => e.payload.edge_id)
          .sort(),
        [...revoked.json.revoked].sort(),
      );
    });

    it('an expired edge stops applying at its expiry', async () => {
      const h = await coordinatorWarren(target, fast());
      const [a, b, c] = await Promise.all(
        [1, 2, 3].map(
          async () => (await h.api('POST', `${Z}/agents`, { application_id: 'app' })).json.agent.id,
        ),
      );
      const soon = new Date(Date.now() + 300).toISOString();
      const ab = await h.api('POST', `${Z}/delegations`, {
        source_agent_id: a,
        target_agent_id: b,
        constraints: { expires_at: soon },
      });
      assert.equal(ab.json.delegation.status, 'active');
      // A child edge cannot outlive its parent.
      const later = new Date(Date.now() + 60_000).toISOString();
      const outlive = await h.api('POST', `${Z}/delegations`, {
        source_agent_id: b,
        target_agent_id: c,
        constraints: { expires_at: later },
      });
      assert.equal(outlive.status, 403);
      await new Promise((r) => setTimeout(r, 400));
      const listed = (await h.api('GET', `${Z}/delegations?agent_id=${b}`)).json.delegations;
      assert.equal(listed[0].status, 'expired');
      const after = await h.api('POST', `${Z}/delegations`, { source_agent_id: b, target_agent_id: c });
      assert.equal(after.status, 403);
    });
  });
});
