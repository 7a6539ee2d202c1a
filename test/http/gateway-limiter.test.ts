/**
 * One limiter per provider key at the model gateway: 20 calls on one key against a provider
 * that serves 5 at a time and answers 429 past that all succeed (held and retried as the
 * provider's retry-after says), a concurrency limit keeps the provider from ever refusing,
 * a 529 is retried too, and the retries are bounded: past them the agent gets the answer.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BODY, post, type Rig, rig } from '../helpers/gateway-rig.ts';
import { overloaded } from '../helpers/mock-anthropic.ts';
import { parsePrometheus, sampleValue } from '../helpers/prometheus.ts';
import { eventsOf, forEachWarren, until } from '../helpers/warrens.ts';

const CALLS = 20;
const all = (r: Rig) => Promise.all(Array.from({ length: CALLS }, () => post(r, BODY)));
const retries = async (r: Rig) => (await eventsOf(r.h, r.id)).filter((e) => e.type === 'session.model_retry');

forEachWarren(
  'the model gateway’s limiter per provider key',
  (t) => {
    it('20 calls against a provider serving 5 at a time all succeed, its 429s held and retried', async () => {
      const r = await rig(
        t,
        () => ({ text: 'ok', delayMs: 100 }),
        {},
        {
          mock: { capacity: { concurrent: 5, retryAfterS: 0.05 } },
          gateway: { concurrency: 0, retries: 20, maxRetryWaitMs: 30_000 },
        },
      );
      const answers = await all(r);
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(CALLS).fill(200),
      );
      assert.ok(r.mock.load.refused > 0, 'the provider refused none: nothing was held');
      assert.equal(r.mock.messages.length, CALLS);
      const logged = await until(
        async () => ((await retries(r)).length > 0 ? retries(r) : null),
        10_000,
        'retries',
      );
      assert.equal(logged[0]!.payload.status, 429);
      assert.equal(logged[0]!.payload.waitMs, 50);

      // The operator sees them: `warren status` and /metrics.
      const status = (await r.h.api('GET', '/v1/status')).json;
      assert.equal(status.gateway.enabled, true);
      assert.equal(status.gateway.keys, 1);
      assert.equal(status.gateway.inFlight, 0);
      assert.equal(status.gateway.retries, r.mock.load.refused);
      assert.ok(status.gateway.waits > 0);
      const res = await fetch(`${r.h.url}/metrics`, { headers: { authorization: `Bearer ${r.h.key}` } });
      const metrics = parsePrometheus(await res.text());
      assert.equal(sampleValue(metrics, 'warren_gateway_retries_total'), r.mock.load.refused);
      assert.equal(sampleValue(metrics, 'warren_gateway_calls', { state: 'in_flight' }), 0);
    });

    it('a concurrency limit per key keeps the provider from refusing at all', async () => {
      const r = await rig(
        t,
        () => ({ text: 'ok', delayMs: 50 }),
        {},
        {
          mock: { capacity: { concurrent: 5 } },
          gateway: { concurrency: 5, retries: 0 },
        },
      );
      const answers = await all(r);
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(CALLS).fill(200),
      );
      assert.equal(r.mock.load.refused, 0);
      assert.equal(r.mock.load.most, 5);
      const status = (await r.h.api('GET', '/v1/status')).json;
      assert.equal(status.gateway.queuedTotal, CALLS - 5);
      assert.equal(status.gateway.retries, 0);
    });

    it('a 529 is retried too; past the retries the agent gets the answer', async () => {
      const once = await rig(
        t,
        (_req, info) => (info.index === 0 ? overloaded() : { text: 'ok' }),
        {},
        {
          gateway: { retries: 1 },
        },
      );
      const ok = await post(once, BODY);
      assert.equal(ok.status, 200);
      assert.equal(once.mock.messages.length, 2);

      const never = await rig(
        t,
        () => ({ text: 'never' }),
        {},
        {
          mock: { capacity: { concurrent: 0, retryAfterS: 0 } },
          gateway: { retries: 2 },
        },
      );
      const refused = await post(never, BODY);
      assert.equal(refused.status, 429);
      assert.equal(JSON.parse(refused.text).error.type, 'rate_limit_error');
      assert.equal(never.mock.load.refused, 3);
    });

    it('a call is held no longer than maxRetryWaitMs', async () => {
      const r = await rig(
        t,
        () => ({ text: 'never' }),
        {},
        {
          mock: { capacity: { concurrent: 0, retryAfterS: 120 } },
          gateway: { retries: 5, maxRetryWaitMs: 1000 },
        },
      );
      const refused = await post(r, BODY);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['retry-after'], '120');
      assert.equal(r.mock.load.refused, 1);
    });
  },
  ['sqlite'],
);
