/**
 * The model gateway's OpenAI Responses API (`/v1/gateway/openai/v1`) against the mock, with a
 * session whose upstream is held directly (codex-gateway.test.ts runs the real CLI): a stream
 * passes event by event and is metered from `response.completed`, a JSON answer from its
 * `usage`; the session's key goes upstream as a bearer, the agent's credential never does;
 * only the Responses API and the model list are offered, with errors in OpenAI's shape.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { it } from 'node:test';
import {
  counted,
  gatewayUsage,
  KEY,
  meteredUsage,
  OPENAI_BODY,
  OPENAI_PATH,
  openaiRig,
  post,
} from '../helpers/gateway-rig.ts';
import { request } from '../helpers/http.ts';
import { forEachWarren, sessionOf } from '../helpers/warrens.ts';

const USAGE = { input_tokens: 130, cached_tokens: 30, output_tokens: 9 };

forEachWarren('the model gateway (OpenAI Responses)', (t) => {
  it('passes a stream on event by event, and meters it from response.completed', async () => {
    const r = await openaiRig(t, () => ({
      text: 'a streamed answer',
      usage: USAGE,
      model: 'gpt-5-2025-08-07',
      eventDelayMs: 50,
    }));
    let writtenAtFirst = -1;
    const res = await post(
      r,
      { ...OPENAI_BODY, stream: true },
      () => {
        writtenAtFirst = r.mock.eventsWritten;
      },
      OPENAI_PATH,
    );
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /text\/event-stream/);
    const types = [...res.text.matchAll(/^event: ([\w.]+)$/gm)].map((m) => m[1]);
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    // The agent had the first event while the mock had yet to write most of the stream.
    assert.ok(writtenAtFirst >= 1 && writtenAtFirst < types.length, `${writtenAtFirst} of ${types.length}`);

    const [e] = await meteredUsage(r);
    assert.deepEqual(counted(e!), {
      inputTokens: 130,
      outputTokens: 9,
      cacheReadTokens: 30,
      cacheWriteTokens: 0,
      model: 'gpt-5-2025-08-07',
    });
    assert.equal(e!.payload.provider, 'openai');
    // GPT-5 at $1.25 / $10 per million, cached input at 0.1×.
    const cost = (100 * 1.25 + 30 * 0.125 + 9 * 10) / 1e6;
    assert.ok(Math.abs((e!.payload.costUsd as number) - cost) < 1e-12, String(e!.payload.costUsd));
    const s = await sessionOf(r.h.warren, r.id);
    assert.equal(s.usage.inputTokens, 130);
    assert.equal(s.subtreeUsage.outputTokens, 9);
  });

  it('meters a JSON answer; sends the session’s key as a bearer, never the agent’s credential', async () => {
    const r = await openaiRig(t, () => ({ text: 'plain', usage: USAGE }));
    const res = await post(r, OPENAI_BODY, undefined, OPENAI_PATH);
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.text).output[0].content[0].text, 'plain');
    const [e] = await meteredUsage(r);
    assert.equal(e!.payload.inputTokens, 130);
    assert.equal(e!.payload.priced, false); // the mock's model has no price
    const sent = r.mock.requests.at(-1)!;
    assert.equal(sent.path, '/v1/responses');
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    assert.ok(!JSON.stringify(sent.headers).includes(r.token));
    assert.deepEqual(sent.body, OPENAI_BODY);
  });

  it('meters a stream the agent hangs up on before its usage came: the input as estimated', async () => {
    const r = await openaiRig(t, () => ({
      text: 'a long answer cut short',
      usage: USAGE,
      eventDelayMs: 100,
    }));
    const body = JSON.stringify({ ...OPENAI_BODY, stream: true });
    const req = httpRequest(new URL(OPENAI_PATH, r.h.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...r.auth },
    });
    req.on('response', (res) => res.once('data', () => req.destroy()));
    req.on('error', () => {});
    req.end(body);
    const [e] = await meteredUsage(r);
    assert.equal(e!.payload.estimated, true);
    assert.equal(e!.payload.inputTokens, Math.ceil(Buffer.byteLength(body) / 4));
    assert.equal(e!.payload.outputTokens, 0);
  });

  it('the model list goes upstream; other endpoints and credentials are refused in OpenAI’s shape', async () => {
    const r = await openaiRig(t, () => ({ text: 'ok' }));
    const models = await request(r.h.url, 'GET', '/v1/gateway/openai/v1/models', undefined, {
      auth: null,
      headers: r.auth,
    });
    assert.equal(models.status, 200);
    assert.equal(models.json.object, 'list');
    assert.deepEqual(r.mock.unknown, ['GET /v1/models']);
    for (const path of ['/v1/gateway/openai/v1/chat/completions', '/v1/gateway/openai/v1/files']) {
      const res = await post(r, OPENAI_BODY, undefined, path);
      assert.equal(res.status, 404);
      assert.equal(JSON.parse(res.text).error.code, 'unknown_url');
    }
    const unauth = await request(r.h.url, 'POST', OPENAI_PATH, OPENAI_BODY, {
      auth: null,
      headers: { 'x-api-key': r.token }, // Anthropic's header is not OpenAI's
    });
    assert.equal(unauth.status, 401);
    assert.deepEqual(Object.keys(unauth.json), ['error']);
    assert.equal(unauth.json.error.code, 'invalid_api_key');
    assert.equal(r.mock.requests.length, 0);
    assert.deepEqual(r.mock.unknown, ['GET /v1/models']);
    assert.equal((await gatewayUsage(r)).length, 0);
  });
});
