/**
 * The model gateway with the real `codex` CLI (node_modules/.bin/codex): a codex agent whose
 * spawn gives an OpenAI key calls warren's `/v1/gateway/openai/v1/responses`, which re-sends
 * the call to the mock Responses API with the real key. The key is never in the agent's
 * processes, the usage in the log is the mock's, and a budget stops the call that would
 * cross it before the mock sees it. Setup as in codex.test.ts: a private CODEX_HOME root, no
 * network.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { it } from 'node:test';
import { defaultGatewayConfig } from '../../src/kernel/gateway/config.ts';
import { CodexRuntime } from '../../src/runtimes/codex/index.ts';
import { codexAgents } from '../helpers/codex-agents.ts';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { startMockOpenAI } from '../helpers/mock-openai.ts';
import { call, eventsOf, forEachWarren, outputs, sessionOf, until, waitStatus } from '../helpers/warrens.ts';

const KEY = 'sk-openai-gateway-test-key-81c2e';
const USAGE = { input_tokens: 130, cached_tokens: 30, output_tokens: 9 };

const { mock, homeRoot, pids: codexPids } = await codexAgents('warren-codex-gateway-');

const runtime = () =>
  new CodexRuntime({
    model: 'mock-model',
    homeRoot,
    // A refused request fails the turn at once (codex retries 5xx otherwise).
    provider: { request_max_retries: 0, stream_max_retries: 0 },
  });

async function spawn(h: HttpWarren, extra: Record<string, unknown> = {}, m = mock): Promise<string> {
  await call(h.warren, 'secrets_set', { name: 'openai', value: KEY });
  const r = await h.api('POST', '/v1/sessions', {
    runtime: 'codex',
    prompt: 'say hello',
    env: { OPENAI_BASE_URL: m.baseUrl },
    secretEnv: { OPENAI_API_KEY: 'openai' },
    ...extra,
  });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.session.id as string;
}

forEachWarren(
  'codex through the model gateway',
  (t) => {
    it('the key stays with warren; usage is the provider’s', { timeout: 90_000 }, async () => {
      // The answer is held back while the test reads the turn's processes.
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      mock.script = async (r) => {
        if (r.index === 0) await held;
        return { text: `answer ${r.index}`, usage: USAGE };
      };
      const h = await startHttp(t, { runtimes: [runtime()] });
      const id = await spawn(h);
      await until(() => mock.requests.length === 1, 30_000, 'the first model call');
      // Every process of the turn, codex's own helpers too (it runs `git status` for its
      // context): read once, skipping one that ended between the listing and the read.
      const procs = codexPids().flatMap((p) => {
        try {
          return [
            {
              p,
              environ: readFileSync(`/proc/${p}/environ`, 'utf8'),
              argv: readFileSync(`/proc/${p}/cmdline`, 'utf8'),
            },
          ];
        } catch {
          return [];
        }
      });
      const token = h.tokenOf(id);
      for (const { p, environ, argv } of procs) {
        assert.ok(!environ.includes(KEY), `key in environ of ${p}`);
        assert.ok(!argv.includes(KEY), `key in cmdline of ${p}`);
        assert.ok(!environ.includes(mock.baseUrl), `the real endpoint in environ of ${p}`);
        assert.ok(!argv.includes(mock.baseUrl), `the real endpoint in cmdline of ${p}`);
      }
      // codex itself (its node launcher and the native binary) is pointed at the gateway.
      const codex = procs.filter(({ argv }) =>
        argv
          .split('\0')
          .slice(0, 2)
          .some((a) => basename(a).startsWith('codex')),
      );
      assert.ok(codex.length >= 1, procs.map(({ argv }) => argv).join('\n'));
      for (const { environ, argv } of codex) {
        assert.ok(environ.includes(`WARREN_TOKEN=${token}`));
        assert.ok(argv.includes(`${h.url}/v1/gateway/openai/v1`), argv);
      }
      // Nor in the files of its CODEX_HOME.
      for (const f of readdirSync(homeRoot, { recursive: true, withFileTypes: true })) {
        if (f.isFile()) assert.ok(!readFileSync(join(f.parentPath, f.name)).includes(KEY), f.name);
      }
      release();
      await waitStatus(h.warren, id, 'idle', 30_000);
      assert.deepEqual(await outputs(h.warren, id), ['answer 0']);

      // Upstream: the real key, never the agent's credential.
      for (const r of mock.requests) {
        assert.equal(r.headers.authorization, `Bearer ${KEY}`);
        assert.ok(!JSON.stringify(r.headers).includes(token));
      }
      // The log: one gateway usage per model call, the mock's numbers; the turn counts only itself.
      const usage = (await eventsOf(h.warren, id)).filter((e) => e.type === 'session.usage');
      const metered = usage.filter((e) => e.payload.source === 'gateway');
      assert.equal(metered.length, mock.requests.length);
      for (const e of metered) {
        assert.equal(e.payload.provider, 'openai');
        assert.equal(e.payload.inputTokens, 130);
        assert.equal(e.payload.cacheReadTokens, 30);
        assert.equal(e.payload.outputTokens, 9);
      }
      const s = await sessionOf(h.warren, id);
      assert.equal(s.usage.inputTokens, 130 * mock.requests.length);
      assert.equal(s.usage.outputTokens, 9 * mock.requests.length);
      assert.equal(s.usage.turns, 1);

      await call(h.warren, 'kill', { id });
      await waitStatus(h.warren, id, 'stopped');
      await until(() => codexPids().length === 0, 20_000, 'every codex process to be gone');
    });

    it('a budget refuses the call that would cross it, unsent, and ends the session', {
      timeout: 60_000,
    }, async () => {
      mock.script = () => ({ text: 'never', usage: USAGE });
      const h = await startHttp(t, { runtimes: [runtime()], kernel: { termGraceMs: 10_000 } });
      // codex's first request is kilobytes of instructions and tools: far past 100 tokens.
      const id = await spawn(h, { budget: { inputTokens: 100 } });
      await waitStatus(h.warren, id, 'stopped', 40_000);
      const s = await sessionOf(h.warren, id);
      assert.equal(s.endReason, 'budget_exceeded');
      assert.equal(mock.requests.length, 0, 'the mock saw a model call');
      const events = await eventsOf(h.warren, id);
      const refused = events.find((e) => e.type === 'session.model_refused');
      assert.equal(refused?.payload.limit, 'inputTokens');
      assert.ok((refused?.payload.estimated as number) > 100, JSON.stringify(refused?.payload));
      assert.equal(events.filter((e) => e.type === 'budget.exceeded').length, 1);
      await until(() => codexPids().length === 0, 20_000, 'every codex process to be gone');
    });

    it('20 agents on one key against a provider serving 5 at a time all finish, its 429s held', {
      timeout: 200_000,
    }, async () => {
      // The first calls are held until the provider has refused one: on a loaded machine the
      // twenty processes start spread out, and calls that never overlap would test nothing.
      const refusedOnce = async () => {
        for (let i = 0; i < 1500 && busy.load.refused === 0; i++) await new Promise((r) => setTimeout(r, 20));
      };
      const busy = await startMockOpenAI(
        async () => {
          await refusedOnce();
          return { text: 'done', delayMs: 100 };
        },
        { capacity: { concurrent: 5, retryAfterS: 0.05 } },
      );
      try {
        const h = await startHttp(t, {
          runtimes: [runtime()],
          kernel: {
            // Bounded by the wait, not the count: a loaded machine answers slower than 5 at a time.
            gateway: { ...defaultGatewayConfig(), concurrency: 0, retries: 1000, maxRetryWaitMs: 30_000 },
          },
        });
        const ids = await Promise.all(Array.from({ length: 20 }, () => spawn(h, {}, busy)));
        // Twenty codex processes start at once: generous for a loaded machine.
        for (const id of ids) await waitStatus(h.warren, id, 'idle', 120_000);
        for (const id of ids) assert.deepEqual(await outputs(h.warren, id), ['done']);
        assert.ok(busy.load.refused > 0, 'the provider refused none: nothing was held');
        assert.equal(busy.load.most, 5);
        assert.equal(busy.requests.length, 20);
        for (const id of ids) await call(h.warren, 'kill', { id });
        await until(() => codexPids().length === 0, 20_000, 'every codex process to be gone');
      } finally {
        await busy.close();
      }
    });
  },
  ['sqlite'],
);
