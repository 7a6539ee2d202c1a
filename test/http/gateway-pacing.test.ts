/**
 * Pacing and the circuit breaker per provider key, through the gateway's HTTP half: a call
 * past `gateway.rpm` waits in the limiter (seen in status) instead of going upstream; a
 * provider that says no requests are left holds the next call until its reset; a key whose
 * calls keep failing upstream has its breaker opened, calls refused at once in the API's
 * shape, and closed again by a probe, each change in the log, status and /metrics.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { it } from 'node:test';
import {
  BODY,
  OPENAI_BODY,
  OPENAI_PATH,
  type OpenAIRig,
  openaiRig,
  post,
  rig,
} from '../helpers/gateway-rig.ts';
import { overloaded } from '../helpers/mock-anthropic.ts';
import { parsePrometheus, sampleValue } from '../helpers/prometheus.ts';
import { eventsOf, forEachWarren, until } from '../helpers/warrens.ts';

const status = async (r: OpenAIRig) => (await r.h.api('GET', '/v1/status')).json.gateway;
const breakerEvents = async (r: { h: OpenAIRig['h']; id: string }) =>
  (await eventsOf(r.h, r.id)).filter((e) => e.type === 'session.model_breaker').map((e) => e.payload);

/** One call answered, then a second left waiting for the key's pace (destroy it to give up). */
async function paced(r: OpenAIRig) {
  assert.equal((await post(r, OPENAI_BODY, undefined, OPENAI_PATH)).status, 200);
  const req = httpRequest(new URL(OPENAI_PATH, r.h.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...r.auth },
  });
  req.on('error', () => {});
  req.end(JSON.stringify(OPENAI_BODY));
  await until(async () => (await status(r)).paced === 1, 10_000, 'the second call to be paced');
  return req;
}

forEachWarren(
  'the model gateway’s pacing and circuit breaker per provider key',
  (t) => {
    it('a call past gateway.rpm waits in the limiter, unsent, and leaves when its agent does', async () => {
      const r = await openaiRig(t, () => ({ text: 'ok' }), {}, { rpm: 1 });
      const req = await paced(r);
      const s = await status(r);
      assert.equal(s.pacedTotal, 1);
      assert.equal(r.mock.requests.length, 1, 'the paced call went upstream');
      const res = await fetch(`${r.h.url}/metrics`, { headers: { authorization: `Bearer ${r.h.key}` } });
      const metrics = parsePrometheus(await res.text());
      assert.equal(sampleValue(metrics, 'warren_gateway_calls', { state: 'paced' }), 1);
      assert.equal(sampleValue(metrics, 'warren_gateway_paced_total'), 1);
      req.destroy();
      await until(async () => (await status(r)).paced === 0, 10_000, 'the paced call to leave');
      assert.equal((await status(r)).inFlight, 0);
      assert.equal(r.mock.requests.length, 1);
    });

    it('gateway.tpm counts what the provider said a call used, cached input included', async () => {
      // 990 input (500 of them cached) and 5 output: with the next call's estimate, past 1000.
      const usage = { input_tokens: 990, cached_tokens: 500, output_tokens: 5 };
      const r = await openaiRig(t, () => ({ text: 'ok', usage }), {}, { tpm: 1000 });
      const req = await paced(r);
      assert.equal(r.mock.requests.length, 1);
      req.destroy();
      await until(async () => (await status(r)).paced === 0, 10_000, 'the paced call to leave');
    });

    it('a provider that says no requests are left holds the next call until its reset', async () => {
      const sentAt: number[] = [];
      const r = await openaiRig(t, (req) => {
        sentAt.push(Date.now());
        return req.index === 0
          ? {
              text: 'first',
              headers: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '400ms' },
            }
          : { text: 'second' };
      });
      const first = await post(r, OPENAI_BODY, undefined, OPENAI_PATH);
      const answered = Date.now();
      assert.equal(first.status, 200);
      assert.equal((await post(r, OPENAI_BODY, undefined, OPENAI_PATH)).status, 200);
      assert.equal((await status(r)).pacedTotal, 1);
      // Not sent before the reset the provider gave (less a margin for the answer's own trip).
      assert.ok(sentAt[1]! - answered >= 300, `sent ${sentAt[1]! - answered} ms after the answer`);
    });

    it('opens after failures in a row, refuses at once naming itself, and a probe closes it', async () => {
      let failing = true;
      const r = await openaiRig(
        t,
        () => (failing ? { error: { status: 502, message: 'bad gateway upstream' } } : { text: 'ok' }),
        {},
        { breakerFailures: 2, breakerCoolMs: 300 },
      );
      for (let i = 0; i < 2; i++)
        assert.equal((await post(r, OPENAI_BODY, undefined, OPENAI_PATH)).status, 502);
      const refused = await post(r, OPENAI_BODY, undefined, OPENAI_PATH);
      assert.equal(refused.status, 503);
      assert.match(
        JSON.parse(refused.text).error.message,
        /^warren: the circuit breaker of this provider key is open: 2 calls in a row failed upstream \(last: 502\); it lets a call through again at \S+Z/,
      );
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(r.mock.requests.length, 2, 'a refused call went upstream');
      const open = await status(r);
      assert.deepEqual([open.breakersOpen, open.breakerOpened, open.breakerRefused], [1, 1, 1]);
      const res = await fetch(`${r.h.url}/metrics`, { headers: { authorization: `Bearer ${r.h.key}` } });
      const metrics = parsePrometheus(await res.text());
      assert.equal(sampleValue(metrics, 'warren_gateway_breakers_open'), 1);
      assert.equal(sampleValue(metrics, 'warren_gateway_breaker_refused_total'), 1);

      failing = false;
      const ok = await until(
        async () => ((await post(r, OPENAI_BODY, undefined, OPENAI_PATH)).status === 200 ? true : null),
        10_000,
        'a probe to go through',
      );
      assert.ok(ok);
      assert.equal((await status(r)).breakersOpen, 0);
      const events = await until(
        async () => ((await breakerEvents(r)).length === 2 ? breakerEvents(r) : null),
        10_000,
        'the breaker events',
      );
      assert.equal(events[0]!.state, 'open');
      assert.equal(events[0]!.failures, 2);
      assert.equal(events[0]!.cause, '502');
      assert.equal(events[0]!.provider, 'openai');
      assert.match(String(events[0]!.until), /Z$/);
      assert.equal(events[1]!.state, 'closed');
    });

    it('counts an upstream with no answer, and a 529 past the retries (Anthropic’s shape)', async () => {
      const gone = await openaiRig(
        t,
        () => ({ text: 'ok' }),
        { baseUrl: 'http://127.0.0.1:1/v1' },
        {
          breakerFailures: 1,
          breakerCoolMs: 60_000,
        },
      );
      await assert.rejects(post(gone, OPENAI_BODY, undefined, OPENAI_PATH));
      const refused = await post(gone, OPENAI_BODY, undefined, OPENAI_PATH);
      assert.equal(refused.status, 503);
      assert.match(JSON.parse(refused.text).error.message, /last: ECONNREFUSED/);

      const a = await rig(t, () => overloaded(), {}, { gateway: { retries: 0, breakerFailures: 1 } });
      assert.equal((await post(a, BODY)).status, 529);
      const held = await post(a, BODY);
      assert.equal(held.status, 503);
      assert.equal(JSON.parse(held.text).type, 'error');
      assert.match(JSON.parse(held.text).error.message, /circuit breaker .*last: 529/);
      assert.equal(a.mock.messages.length, 1);
    });
  },
  ['sqlite'],
);
