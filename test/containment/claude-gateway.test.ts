/**
 * The model gateway from inside a sandbox without network: a confined claude-code agent
 * cannot reach the mock model API on the host's loopback, yet its model calls arrive there
 * through warren's gateway (reached by the unix socket bound into its sandbox), with the
 * key the spawn gave and the agent never held.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isSideRequest, type MockAnthropic, startMockAnthropic } from '../helpers/mock-anthropic.ts';
import { bwrapMissing, type Confined, confined } from './harness.ts';

const skip = await bwrapMissing();
const KEY = 'sk-ant-contained-7d1e';

describe('a claude-code agent confined without network', { skip: skip ?? false }, () => {
  let w: Confined;
  let mock: MockAnthropic;
  before(async () => {
    w = await confined({ containmentNetwork: 'none' });
    mock = await startMockAnthropic((req) =>
      isSideRequest(req) ? { text: 'ok' } : { text: 'answered through the gateway' },
    );
  });
  after(async () => {
    await w?.close();
    await mock?.close();
  });

  it('reaches its model through the gateway, with a key it never held', async () => {
    const id = await w.spawn({
      runtime: 'claude-code',
      prompt: 'hello',
      cwd: w.workdir('claude'),
      config: { tools: [] },
      env: { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: KEY },
    });
    await w.line(id, /^answered through the gateway$/);
    assert.deepEqual((await w.show(id)).containment, { mode: 'bwrap', network: 'none' });
    const calls = mock.requests.filter((r) => r.method === 'POST' && r.url.startsWith('/v1/messages'));
    assert.ok(calls.length > 0);
    for (const c of calls) assert.equal(c.headers['x-api-key'], KEY);
    const started = (await w.events(id)).find((e) => e.type === 'session.claude_started');
    assert.ok(!JSON.stringify(started?.payload).includes(KEY));
  });
});
