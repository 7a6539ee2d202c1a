/**
 * The model gateway's HTTP half against the mock model API, with a session whose upstream is
 * held directly (claude-gateway.test.ts runs the real CLI): streaming passes each event on
 * as it comes, usage is read from streams and JSON alike, the agent's credential never goes
 * upstream and the session's key does, and only the Messages API's calls are offered.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { it } from 'node:test';
import { BODY, counted, gatewayUsage, KEY, meteredUsage, PATH, post, rig } from '../helpers/gateway-rig.ts';
import { request } from '../helpers/http.ts';
import { forEachWarren, idleScript, sessionOf, waitStatus } from '../helpers/warrens.ts';

forEachWarren('the model gateway (Anthropic)', (t) => {
  it('passes a stream on event by event, and meters it from message_start and message_delta', async () => {
    const usage = {
      input_tokens: 21,
      output_tokens: 8,
      cache_read_input_tokens: 5,
      cache_creation_input_tokens: 3,
    };
    const r = await rig(t, () => ({ text: 'streamed answer', usage, eventDelayMs: 50 }));
    let writtenAtFirst = -1;
    const res = await post(r, { ...BODY, stream: true }, () => {
      writtenAtFirst = r.mock.eventsWritten;
    });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /text\/event-stream/);
    const types = [...res.text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    assert.deepEqual(types.slice(0, 2), ['message_start', 'ping']);
    assert.equal(types.at(-1), 'message_stop');
    // The agent had the first event while the mock had yet to write most of the stream.
    assert.ok(writtenAtFirst >= 1 && writtenAtFirst < types.length, `${writtenAtFirst} of ${types.length}`);
    assert.equal(r.mock.eventsWritten, types.length);

    const [e] = await meteredUsage(r);
    assert.deepEqual(counted(e!), {
      inputTokens: 29,
      outputTokens: 8,
      cacheReadTokens: 5,
      cacheWriteTokens: 3,
      model: 'claude-sonnet-4-5',
    });
    // Priced from the table: sonnet 4 at $3 / $15 per million, cache reads 0.1×, writes 1.25×.
    const cost = (21 * 3 + 8 * 15 + 5 * 0.3 + 3 * 3.75) / 1e6;
    assert.ok(Math.abs((e!.payload.costUsd as number) - cost) < 1e-12, String(e!.payload.costUsd));
    const s = await sessionOf(r.h.warren, r.id);
    assert.equal(s.usage.inputTokens, 29);
    assert.equal(s.subtreeUsage.outputTokens, 8);
  });

  it('meters a stream the agent hangs up on halfway: what the provider had counted by then', async () => {
    const usage = { input_tokens: 77, output_tokens: 9 };
    const r = await rig(t, () => ({ text: 'a long answer cut short', usage, eventDelayMs: 100 }));
    const req = httpRequest(new URL(PATH, r.h.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': r.token },
    });
    // Gone as soon as the first event (message_start, with the input count) has come.
    req.on('response', (res) => res.once('data', () => req.destroy()));
    req.on('error', () => {});
    req.end(JSON.stringify({ ...BODY, stream: true }));
    const [e] = await meteredUsage(r);
    assert.equal(e!.payload.inputTokens, 77);
    // message_start's first output count: the rest was never generated for it.
    assert.equal(e!.payload.outputTokens, 1);
  });

  it('meters a JSON answer; sends the session’s key upstream and never the agent’s credential', async () => {
    const r = await rig(t, () => ({ text: 'plain', usage: { input_tokens: 13, output_tokens: 4 } }));
    const res = await post(r, BODY);
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.text).content[0].text, 'plain');
    const [e] = await meteredUsage(r);
    assert.equal(e!.payload.inputTokens, 13);
    assert.equal(e!.payload.outputTokens, 4);
    const sent = r.mock.requests.at(-1)!;
    assert.equal(sent.headers['x-api-key'], KEY);
    assert.equal(sent.headers.authorization, undefined);
    assert.ok(!JSON.stringify(sent.headers).includes(r.token));
    assert.deepEqual(sent.body, BODY);
  });

  it('takes a conversation past the server’s 1 MiB body limit, byte for byte', async () => {
    const r = await rig(t, () => ({ text: 'long' }));
    const big = { ...BODY, messages: [{ role: 'user', content: 'é'.repeat(1_500_000) }] };
    const res = await post(r, big);
    assert.equal(res.status, 200, res.text.slice(0, 300));
    assert.deepEqual(r.mock.requests.at(-1)!.body, big);
    // Past the API's own 32 MB: refused in the API's shape, unsent.
    const seen = r.mock.requests.length;
    const huge = await post(r, {
      ...BODY,
      messages: [{ role: 'user', content: 'x'.repeat(33 * 1024 * 1024) }],
    });
    assert.equal(huge.status, 413);
    assert.equal(JSON.parse(huge.text).error.type, 'request_too_large');
    assert.equal(r.mock.requests.length, seen);
  });

  it('an ANTHROPIC_AUTH_TOKEN upstream gets a bearer', async () => {
    const r = await rig(t, () => ({ text: 'ok' }), { auth: 'bearer' });
    assert.equal((await post(r, BODY)).status, 200);
    const sent = r.mock.requests.at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    assert.equal(sent.headers['x-api-key'], undefined);
  });

  it('count_tokens and models go upstream unmetered; batches and the rest are not offered', async () => {
    const r = await rig(t, () => ({ text: 'ok' }));
    const count = await post(r, BODY, undefined, `${PATH}/count_tokens`);
    assert.equal(count.status, 200);
    assert.ok(JSON.parse(count.text).input_tokens > 0);
    const models = await request(r.h.url, 'GET', '/v1/gateway/anthropic/v1/models', undefined, {
      auth: null,
      headers: { 'x-api-key': r.token },
    });
    assert.equal(models.status, 200);
    assert.equal(models.json.data[0].id, 'claude-mock-1');
    const seen = r.mock.requests.length;
    const batch = await post(r, { requests: [] }, undefined, `${PATH}/batches`);
    assert.equal(batch.status, 404);
    assert.equal(JSON.parse(batch.text).error.type, 'not_found_error');
    assert.equal(r.mock.requests.length, seen);
    assert.equal((await gatewayUsage(r)).length, 0);
    // The CLI's reachability check of its base URL is answered here, without credentials.
    const head = await request(r.h.url, 'HEAD', '/v1/gateway/anthropic', undefined, { auth: null });
    assert.equal(head.status, 200);
  });

  it('refuses what is not a live session’s credential, in the API’s error shape', async () => {
    const r = await rig(t, () => ({ text: 'ok' }));
    const refused = async (headers: Record<string, string>) => {
      const res = await request(r.h.url, 'POST', PATH, BODY, { auth: null, headers });
      assert.equal(res.status, 401, JSON.stringify(res.json));
      assert.deepEqual(Object.keys(res.json), ['type', 'error']);
      assert.equal(res.json.error.type, 'authentication_error');
    };
    await refused({});
    await refused({ 'x-api-key': r.h.key }); // an operator key is not a gateway credential
    await refused({ 'x-api-key': r.h.tokenOf(r.id, 1) }); // a generation nobody minted
    // A live session without an upstream here.
    const other = (await r.h.api('POST', '/v1/sessions', { script: idleScript })).json.session.id as string;
    await refused({ 'x-api-key': r.h.tokenOf(other) });
    // The bearer form Claude Code uses with ANTHROPIC_AUTH_TOKEN works as x-api-key does.
    const ok = await request(r.h.url, 'POST', PATH, BODY, { auth: r.token });
    assert.equal(ok.status, 200);
    assert.equal(r.mock.requests.length, 1);
    // The session stops: its credential dies with it, in the commit that stops it.
    await r.h.api('POST', `/v1/sessions/${r.id}/kill`, {});
    await waitStatus(r.h.warren, r.id, 'stopped');
    await refused({ 'x-api-key': r.token });
    assert.equal(r.mock.requests.length, 1);
  });

  it('an upstream that does not answer is no answer to the agent', async () => {
    const r = await rig(t, () => ({ text: 'ok' }), { baseUrl: 'http://127.0.0.1:1' });
    await assert.rejects(post(r, BODY), (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET');
  });
});
