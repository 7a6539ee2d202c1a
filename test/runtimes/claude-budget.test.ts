/**
 * A token budget on a real `claude` CLI session (node_modules/.bin/claude) against the mock
 * model API, with the model gateway off: the usage the CLI reports lands in the subtree
 * totals, and the budget stops the session once spent (through the gateway:
 * claude-gateway.test.ts). Setup as in claude-code.test.ts: a private HOME per agent, no network.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { defaultGatewayConfig } from '../../src/kernel/gateway/config.ts';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import { claudeAgents } from '../helpers/claude-agents.ts';
import { startHttp } from '../helpers/http.ts';
import { startMockAnthropic } from '../helpers/mock-anthropic.ts';
import { startMockMcp } from '../helpers/mock-mcp.ts';
import { gone } from '../helpers/processes.ts';
import { call, eventsOf, forEachWarren, sessionOf, until, waitStatus } from '../helpers/warrens.ts';

const { closers, agentDirs, claudePid } = claudeAgents('warren-claude-budget-');

forEachWarren(
  'claude-code under a token budget',
  (t) => {
    it('the model reports tokens into the subtree totals; spending the budget stops the session', {
      timeout: 60_000,
    }, async () => {
      // Every model call: 600 input tokens. The budget holds one turn, not two.
      const m = await startMockAnthropic(() => ({
        text: 'done',
        usage: { input_tokens: 600, output_tokens: 2 },
      }));
      closers.push(() => m.close());
      const mcp = await startMockMcp(0);
      closers.push(() => mcp.close());
      // The CLI's own reports (the gateway off): docs/gateway.md's gateway.enabled: false.
      const h = await startHttp(t, {
        runtimes: [new ClaudeCodeRuntime()],
        kernel: { termGraceMs: 10_000, gateway: { ...defaultGatewayConfig(), enabled: false } },
      });
      h.warren.kernel.config.publicUrl = mcp.base;
      const dirs = agentDirs();
      const r = await h.api('POST', '/v1/sessions', {
        runtime: 'claude-code',
        prompt: 'first',
        cwd: dirs.cwd,
        env: { ...m.env(), ...dirs.env },
        budget: { inputTokens: 1000 },
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const id = r.json.session.id as string;
      const pid = await claudePid(h, id);

      await waitStatus(h.warren, id, 'idle', 20_000);
      let s = await sessionOf(h.warren, id);
      assert.equal(s.usage.inputTokens, 600);
      assert.deepEqual(
        { inputTokens: s.subtreeUsage.inputTokens, outputTokens: s.subtreeUsage.outputTokens },
        { inputTokens: 600, outputTokens: 2 },
      );
      assert.equal(s.subtreeUsage.costUsd, s.usage.costUsd);
      assert.deepEqual(s.budget.remaining, { inputTokens: 400 });

      // The second turn spends it: SIGTERM as input, a last turn, then it ends on its budget.
      await call(h.warren, 'send', { id, text: 'second' });
      const exceeded = await until(
        async () => (await eventsOf(h, id)).find((e) => e.type === 'budget.exceeded'),
        20_000,
        'budget.exceeded',
      );
      assert.deepEqual(exceeded.payload, { limit: 'inputTokens', max: 1000, used: 1200, over: 200, by: id });
      await waitStatus(h.warren, id, 'stopped', 20_000);
      s = await sessionOf(h.warren, id);
      assert.equal(s.endReason, 'budget_exceeded');
      assert.ok(
        (await eventsOf(h, id)).some(
          (e) => e.type === 'session.input' && String(e.payload.text).includes('[SIGTERM]'),
        ),
      );
      await until(() => gone(pid), 20_000, `claude (pid ${pid}) to be gone`);
    });
  },
  ['sqlite'],
);
