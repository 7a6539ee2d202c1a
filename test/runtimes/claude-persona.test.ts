/**
 * A persona's system prompt and model reach the real `claude` CLI's model request (the
 * model is `test/helpers/mock-anthropic.ts` on loopback; a private HOME per agent).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import { startHttp } from '../helpers/http.ts';
import { type MockAnthropic, startMockAnthropic } from '../helpers/mock-anthropic.ts';
import { startMockMcp } from '../helpers/mock-mcp.ts';
import { call, eventsOf, forEachWarren, outputs, sessionOf, waitStatus } from '../helpers/warrens.ts';

const root = mkdtempSync(join(tmpdir(), 'warren-claude-persona-'));
const closers: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.allSettled(closers.splice(0).map((c) => c()));
  // A real CLI's last writes into its HOME can land while the tree is being removed: retry.
  rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
});

forEachWarren(
  'claude-code with a persona',
  (t) => {
    it("the persona's system prompt and model reach the model request", { timeout: 60_000 }, async () => {
      const m: MockAnthropic = await startMockAnthropic(() => ({
        text: 'verdict: fine',
        usage: { input_tokens: 5, output_tokens: 2 },
      }));
      closers.push(() => m.close());
      const mcp = await startMockMcp(0);
      closers.push(() => mcp.close());
      const h = await startHttp(t, { runtimes: [new ClaudeCodeRuntime()] });
      h.warren.kernel.config.publicUrl = mcp.base;
      const home = join(root, 'home');
      const cwd = join(root, 'work');
      mkdirSync(home);
      mkdirSync(cwd);

      const created = await h.api('POST', '/v1/personas', {
        name: 'reviewer',
        runtime: 'claude-code',
        model: 'claude-persona-model',
        systemPrompt: 'You are the persona reviewer-7. Answer with a verdict.',
        maxTurns: 5,
      });
      assert.equal(created.status, 200, JSON.stringify(created.json));
      const r = await h.api('POST', '/v1/sessions', {
        personaId: 'reviewer',
        prompt: 'review this diff',
        cwd,
        env: { ...m.env(), HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') },
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const id = r.json.session.id as string;
      assert.equal(r.json.session.runtime, 'claude-code');
      try {
        await waitStatus(h.warren, id, 'idle', 30_000);
        assert.deepEqual(await outputs(h, id), ['verdict: fine']);
        const req = m.messages[0]!;
        const system = JSON.stringify(req.system);
        assert.ok(system.includes('You are the persona reviewer-7.'), system);
        // warren's own note is still there, after the persona's.
        assert.ok(system.indexOf('reviewer-7') < system.indexOf(`session ${id} inside warren`), system);
        assert.equal(req.model, 'claude-persona-model');
        const s = await sessionOf(h.warren, id);
        assert.equal(s.persona, 'reviewer');
        assert.equal(s.model, 'claude-persona-model');
        const spawned = (await eventsOf(h, id)).find((e) => e.type === 'session.spawned');
        assert.equal(spawned?.payload.persona, 'reviewer');
      } finally {
        await call(h.warren, 'kill', { id }).catch(() => {});
        await waitStatus(h.warren, id, 'stopped');
      }
    });
  },
  ['sqlite'],
);
