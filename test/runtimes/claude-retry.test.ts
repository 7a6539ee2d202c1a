/**
 * While the model API is overloaded (529), Claude Code retries and says so on stdout
 * (`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error_status":529,
 * "error":"overloaded",…}`, checked against the real CLI). The runtime shows each retry as the
 * session's activity and clears it when the answer arrives; a turn that fails for good reads
 * as the API error it was.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, it } from 'node:test';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import { overloaded, type Script, startMockAnthropic } from '../helpers/mock-anthropic.ts';
import { startMockMcp } from '../helpers/mock-mcp.ts';
import { cleanUp, type Started, startAlone } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'warren-claude-retry-'));
const closers: Array<() => Promise<unknown>> = [];
let started: Started | undefined;
let n = 0;

afterEach(async () => {
  await cleanUp(started);
  started = undefined;
  await Promise.allSettled(closers.splice(0).map((c) => c()));
});
after(() => rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));

async function startClaude(script: Script): Promise<Started> {
  const model = await startMockAnthropic(script);
  const mcp = await startMockMcp();
  closers.push(model.close, mcp.close);
  const home = join(root, `home-${++n}`);
  const cwd = join(root, `work-${n}`);
  mkdirSync(home);
  mkdirSync(cwd);
  started = await startAlone(new ClaudeCodeRuntime(), {
    spec: {
      prompt: 'hello',
      config: {},
      cwd,
      model: null,
      env: { ...model.env(), HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') },
    },
    mcpUrl: `${mcp.base}/mcp`,
  });
  return started;
}

it('shows each model-API retry as activity, and clears it when the answer comes', {
  timeout: 90_000,
}, async () => {
  const s = await startClaude((_req, info) => (info.index < 2 ? overloaded() : { text: 'finally' }));
  await s.rec.waitFor('idle', 60_000);
  const activity = s.rec.of('activity').map((a) => a.text);
  assert.deepEqual(activity, [
    'retrying model API, attempt 1/10 (529 overloaded)',
    'retrying model API, attempt 2/10 (529 overloaded)',
    null,
  ]);
  // Cleared before the answer is logged: the status never outlives the wait.
  const kinds = s.rec.reports.map((r) =>
    r.kind === 'activity' ? `activity:${r.text === null ? 'clear' : 'set'}` : r.kind,
  );
  assert.ok(kinds.indexOf('activity:clear') < kinds.indexOf('output'), kinds.join(' '));
  assert.deepEqual(
    s.rec.of('output').map((o) => o.text),
    ['finally'],
  );
  const retries = s.rec.of('event').filter((e) => e.type === 'api_retry');
  assert.equal(retries.length, 2);
  assert.equal(retries[0]!.payload.status, 529);
  assert.equal(retries[1]!.payload.attempt, 2);
  assert.equal(s.rec.of('exit').length, 0);
});

it('a turn the API fails for good reads as an API error, not "turn failed (success)"', {
  timeout: 90_000,
}, async () => {
  const s = await startClaude(overloaded);
  const exit = await s.rec.waitFor('exit', 60_000);
  assert.equal(exit.result.reason, 'crashed');
  assert.match(String(exit.result.error), /^the model API returned an error: .*529/);
  assert.doesNotMatch(String(exit.result.error), /\(success\)/);
  // The last retry's status was cleared by the result.
  assert.equal(s.rec.of('activity').at(-1)?.text, null);
});
