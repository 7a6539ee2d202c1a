/**
 * The model gateway from inside a sandbox without network, for codex: a confined codex agent
 * cannot reach the mock Responses API on the host's loopback, yet its model calls arrive there
 * through warren's gateway (reached by the unix socket bound into its sandbox), with the key
 * the spawn gave and the agent never held.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type MockOpenAI, startMockOpenAI } from '../helpers/mock-openai.ts';
import { bwrapMissing, type Confined, confined } from './harness.ts';

const skip = await bwrapMissing();
const KEY = 'sk-openai-contained-5b0c';

describe('a codex agent confined without network', { skip: skip ?? false }, () => {
  let w: Confined;
  let mock: MockOpenAI;
  before(async () => {
    w = await confined({ containmentNetwork: 'none' });
    mock = await startMockOpenAI(() => 'answered through the gateway');
  });
  after(async () => {
    await w?.close();
    await mock?.close();
  });

  it('reaches its model through the gateway, with a key it never held', async () => {
    const id = await w.spawn({
      runtime: 'codex',
      prompt: 'hello',
      cwd: w.workdir('codex'),
      config: { model: 'mock-model', provider: { request_max_retries: 0, stream_max_retries: 0 } },
      env: { OPENAI_BASE_URL: mock.baseUrl, OPENAI_API_KEY: KEY },
    });
    await w.line(id, /^answered through the gateway$/);
    assert.deepEqual((await w.show(id)).containment, { mode: 'bwrap', network: 'none' });
    assert.ok(mock.requests.length > 0);
    for (const r of mock.requests) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    const events = await w.events(id);
    assert.ok(!JSON.stringify(events).includes(KEY));
    assert.ok(events.some((e) => e.type === 'session.usage' && e.payload.source === 'gateway'));
  });
});
