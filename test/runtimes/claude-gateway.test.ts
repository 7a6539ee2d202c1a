/**
 * The model gateway with the real `claude` CLI (node_modules/.bin/claude): the agent's model
 * calls go to warren's `/v1/gateway/anthropic`, which re-sends them to the mock model API
 * with the session's real key. The key is never in the agent's processes, the usage in the
 * log is the mock's, a budget stops the call that would cross it before the mock sees it,
 * and the agent's credential dies with its session. Setup as in claude-code.test.ts: a
 * private HOME per agent, no network.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import { claudeAgents } from '../helpers/claude-agents.ts';
import { type HttpWarren, request, startHttp } from '../helpers/http.ts';
import { type MockAnthropic, startMockAnthropic } from '../helpers/mock-anthropic.ts';
import { environOf, gone, groupOf, procFile } from '../helpers/processes.ts';
import { call, eventsOf, forEachWarren, sessionOf, until, waitStatus } from '../helpers/warrens.ts';

const { closers, agentDirs, claudePid } = claudeAgents('warren-claude-gateway-');

const KEY = 'sk-ant-gateway-test-key-5f3a9c';
const USAGE = {
  input_tokens: 120,
  output_tokens: 7,
  cache_read_input_tokens: 300,
  cache_creation_input_tokens: 40,
};

async function mock(
  usage: typeof USAGE | { input_tokens: number; output_tokens: number },
): Promise<MockAnthropic> {
  // Side requests are answered by the script too: every model call has the same usage.
  const m = await startMockAnthropic(() => ({ text: 'done', usage }), { sideRequests: 'script' });
  closers.push(() => m.close());
  return m;
}

async function spawnAgent(h: HttpWarren, m: MockAnthropic, extra: Record<string, unknown> = {}) {
  await call(h.warren, 'secrets_set', { name: 'anthropic', value: KEY });
  const dirs = agentDirs();
  const r = await h.api('POST', '/v1/sessions', {
    runtime: 'claude-code',
    prompt: 'hello',
    cwd: dirs.cwd,
    env: { ANTHROPIC_BASE_URL: m.url, ...dirs.env },
    secretEnv: { ANTHROPIC_API_KEY: 'anthropic' },
    ...extra,
  });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const id = r.json.session.id as string;
  const pid = await claudePid(h, id);
  return { id, pid };
}

const modelCalls = (m: MockAnthropic) =>
  m.requests.filter((r) => r.method === 'POST' && r.url.split('?')[0] === '/v1/messages');

forEachWarren(
  'claude-code through the model gateway',
  (t) => {
    it('the key stays with warren; usage is the provider’s; the credential dies with the session', {
      timeout: 60_000,
    }, async () => {
      const m = await mock(USAGE);
      const h = await startHttp(t, { runtimes: [new ClaudeCodeRuntime()] });
      const { id, pid } = await spawnAgent(h, m);
      await waitStatus(h.warren, id, 'idle', 30_000);

      // Not in any of the agent's processes' environment or arguments.
      const procs = groupOf(pid);
      assert.ok(procs.includes(pid), `the CLI (${pid}) is in its group: ${procs}`);
      for (const p of procs) {
        assert.ok(!procFile(p, 'environ').includes(KEY), `key in environ of ${p}`);
        assert.ok(!procFile(p, 'cmdline').includes(KEY), `key in cmdline of ${p}`);
      }
      const env = environOf(pid);
      assert.equal(env.ANTHROPIC_BASE_URL, `${h.url}/v1/gateway/anthropic`);
      const credential = env.ANTHROPIC_API_KEY!;
      assert.equal(credential, h.tokenOf(id));

      // Upstream: every call carried the real key, and never the agent's credential.
      const calls = modelCalls(m);
      assert.ok(calls.length >= 1);
      for (const c of m.requests) {
        assert.ok(!JSON.stringify(c.headers).includes(credential), `credential sent upstream: ${c.url}`);
        assert.equal(c.headers.authorization, undefined);
      }
      for (const c of calls) assert.equal(c.headers['x-api-key'], KEY);

      // The log: one gateway usage per model call, the mock's numbers; nothing counted twice.
      const metered = (await eventsOf(h, id)).filter(
        (e) => e.type === 'session.usage' && e.payload.source === 'gateway',
      );
      assert.equal(metered.length, calls.length);
      for (const e of metered) {
        assert.equal(e.payload.inputTokens, 120 + 300 + 40);
        assert.equal(e.payload.outputTokens, 7);
        assert.equal(e.payload.cacheReadTokens, 300);
        assert.equal(e.payload.cacheWriteTokens, 40);
        assert.equal(e.payload.provider, 'anthropic');
      }
      const s = await sessionOf(h.warren, id);
      assert.equal(s.usage.inputTokens, 460 * calls.length);
      assert.equal(s.usage.outputTokens, 7 * calls.length);
      assert.equal(s.subtreeUsage.inputTokens, 460 * calls.length);
      assert.equal(s.usage.turns, 1);

      // The session ends: its credential is refused, and nothing reaches the provider.
      await call(h.warren, 'kill', { id });
      await waitStatus(h.warren, id, 'stopped', 20_000);
      const before = m.requests.length;
      const r = await request(
        h.url,
        'POST',
        '/v1/gateway/anthropic/v1/messages',
        { model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
        { auth: null, headers: { 'x-api-key': credential } },
      );
      assert.equal(r.status, 401, JSON.stringify(r.json));
      assert.equal(r.json.type, 'error');
      assert.equal(r.json.error.type, 'authentication_error');
      assert.equal(m.requests.length, before);
      await until(() => gone(pid), 20_000, `claude (pid ${pid}) to be gone`);
    });

    it('a budget refuses the call that would cross it, unsent, and ends the session', {
      timeout: 60_000,
    }, async () => {
      const m = await mock({ input_tokens: 10, output_tokens: 2 });
      const h = await startHttp(t, { runtimes: [new ClaudeCodeRuntime()], kernel: { termGraceMs: 10_000 } });
      // Claude Code's first request is tens of kilobytes: about 6,000 tokens, past 1,000.
      const { id, pid } = await spawnAgent(h, m, { budget: { inputTokens: 1000 } });
      const exceeded = await until(
        async () => (await eventsOf(h, id)).find((e) => e.type === 'budget.exceeded'),
        30_000,
        'budget.exceeded',
      );
      assert.equal(exceeded.payload.limit, 'inputTokens');
      assert.equal(exceeded.payload.used, 0);
      assert.ok((exceeded.payload.estimated as number) > 1000, JSON.stringify(exceeded.payload));
      await waitStatus(h.warren, id, 'stopped', 30_000);
      assert.equal((await sessionOf(h.warren, id)).endReason, 'budget_exceeded');
      assert.equal(modelCalls(m).length, 0, 'the mock saw a model call');
      const events = await eventsOf(h, id);
      assert.ok(events.some((e) => e.type === 'session.model_refused'));
      assert.ok(
        events.some((e) => e.type === 'session.error' && String(e.payload.text).includes('over budget')),
      );
      await until(() => gone(pid), 20_000, `claude (pid ${pid}) to be gone`);
    });

    it('a budget spent by one call refuses the next, unsent', { timeout: 60_000 }, async () => {
      // One call's usage spends it: the next (the turn the SIGTERM starts) is refused.
      const m = await mock({ input_tokens: 500_000, output_tokens: 2 });
      const h = await startHttp(t, { runtimes: [new ClaudeCodeRuntime()], kernel: { termGraceMs: 10_000 } });
      const { id, pid } = await spawnAgent(h, m, { budget: { inputTokens: 400_000 } });
      await waitStatus(h.warren, id, 'stopped', 40_000);
      const s = await sessionOf(h.warren, id);
      assert.equal(s.endReason, 'budget_exceeded');
      const calls = modelCalls(m).length;
      assert.equal(s.usage.inputTokens, 500_000 * calls);
      const events = await eventsOf(h, id);
      const refused = events.filter((e) => e.type === 'session.model_refused');
      assert.ok(refused.length >= 1, 'no call was refused');
      assert.equal(refused[0]!.payload.already, true);
      const exceeded = events.filter((e) => e.type === 'budget.exceeded');
      assert.equal(exceeded.length, 1);
      assert.equal(exceeded[0]!.payload.used, 500_000);
      await until(() => gone(pid), 20_000, `claude (pid ${pid}) to be gone`);
    });
  },
  ['sqlite'],
);
