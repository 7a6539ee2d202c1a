import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachWarren } from '../helpers/warrens.ts';
import { coordinatorWarren, rows } from './helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: fuzz values are anything
type Any = any;

/** A small seeded PRNG: a failure names its seed and replays. */
const prng = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

const ROUTES: Array<[string, string]> = [
  ['POST', '/zones/{z}/agents'],
  ['GET', '/zones/{z}/agents'],
  ['GET', '/zones/{z}/agents/{id}'],
  ['POST', '/zones/{z}/agents/{id}/suspend'],
  ['POST', '/zones/{z}/agents/{id}/resume'],
  ['DELETE', '/zones/{z}/agents/{id}'],
  ['POST', '/zones/{z}/agents/{id}/services'],
  ['GET', '/zones/{z}/agents/{id}/services'],
  ['PATCH', '/zones/{z}/agents/{id}/services/{id}'],
  ['POST', '/zones/{z}/agents/{id}/services/{id}/heartbeat'],
  ['POST', '/zones/{z}/invocations'],
  ['GET', '/zones/{z}/invocations/{id}'],
  ['POST', '/zones/{z}/invocations/{id}/cancel'],
  ['POST', '/zones/{z}/invocations/{id}/complete'],
  ['POST', '/zones/{z}/delegations'],
  ['GET', '/zones/{z}/delegations'],
  ['DELETE', '/zones/{z}/delegations/{id}'],
];

forEachWarren('coordinator route fuzz', (target) => {
  describe('random input to every route', () => {
    it('answers typed 4xx (never 5xx) and leaves no half-written rows', { timeout: 60_000 }, async () => {
      const seed = Number(process.env.FUZZ_SEED ?? 20261122);
      const r = prng(seed);
      const h = await coordinatorWarren(target, {
        limits: { maxDepth: 3, maxChildren: 3, maxPerZone: 8, maxPerApplication: 6 },
      });
      const ids: string[] = ['ses_nope', 'x'.repeat(99), 'x'.repeat(3000), '../../etc', '%00', ''];
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
      const junk = (): Any =>
        pick([
          null,
          42,
          -1,
          1e308,
          '',
          'x'.repeat(5000),
          true,
          [],
          [1, 'a'],
          {},
          { nested: { deep: [1, 2, { a: null }] } },
          'http://127.0.0.1:9/x',
          pick(ids),
          new Date().toISOString(),
        ]);
      const fields = [
        'application_id',
        'parent_id',
        'capabilities',
        'ttl_seconds',
        'session_sid',
        'runtime',
        'config',
        'endpoint_url',
        'health',
        'metadata',
        'service_id',
        'idempotency_key',
        'method',
        'params',
        'timeout_ms',
        'retry_policy',
        'status',
        'result',
        'source_agent_id',
        'target_agent_id',
        'constraints',
      ];
      let fives = 0;
      for (let n = 0; n < 300; n++) {
        const [method, shape] = pick(ROUTES);
        const path = shape
          .replace('{z}', pick(['default', 'default', 'other', 'BAD!', '-']))
          .replace(/\{id\}/g, () => encodeURIComponent(pick(ids)));
        const body: Record<string, unknown> = {};
        for (const f of fields) if (r() < 0.3) body[f] = junk();
        if (r() < 0.5) body.application_id = pick(['app', 'app2', junk()]);
        const headers: Record<string, string> =
          r() < 0.2 ? { 'idempotency-key': pick(['k', 'k2', 'x'.repeat(300)]) } : {};
        const res = await h.api(method, path, method === 'GET' || method === 'DELETE' ? undefined : body, {
          headers,
        });
        if (res.status >= 500) fives++;
        assert.ok(
          res.status < 500,
          `seed ${seed} #${n}: ${method} ${path} ${JSON.stringify(body).slice(0, 300)} → ${res.status} ${JSON.stringify(res.json)}`,
        );
        if (res.status >= 400)
          assert.equal(
            typeof res.json?.error?.code,
            'string',
            `${method} ${path} → ${res.status} ${JSON.stringify(res.json)}`,
          );
        // Created ids feed later requests.
        const made =
          res.json?.agent?.id ??
          res.json?.service?.id ??
          res.json?.invocation?.id ??
          res.json?.delegation?.id;
        if (typeof made === 'string' && !ids.includes(made)) ids.push(made);
      }
      assert.equal(fives, 0);
      // No half-written rows: every agent has its session; terminated ones their revoke event.
      const agents = await rows(h, 'coordinator_agents');
      const sessions = await (h.warren.store.reader as Any)
        .selectFrom('sessions')
        .select(['id', 'status'])
        .execute();
      for (const a of agents) {
        const s = sessions.find((x: Any) => x.id === a.session_id);
        assert.ok(s, `agent ${a.session_id} has its session`);
        if (a.status === 'terminated') assert.equal(s.status, 'stopped');
      }
      const revokes = (await rows(h, 'coordinator_outbox')).filter(
        (o) => o.topic === 'caracal.sessions.revoke',
      );
      assert.equal(revokes.length, agents.filter((a) => a.status === 'terminated').length);
    });
  });
});
