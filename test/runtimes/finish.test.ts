/**
 * `finish()`: the kernel asks an idle agent to end (a SIGTERM is pending). Each runtime closes
 * the agent's input (or, for codex, has no process between turns) and reports exit
 * `completed` within about a second. Along the way: the agent process is reported
 * (`spawned`, with its start time, then `exited`) and its environment holds nothing that
 * only the server has.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AcpRuntime } from '../../src/runtimes/acp/index.ts';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import { CodexRuntime } from '../../src/runtimes/codex/index.ts';
import { CommandRuntime } from '../../src/runtimes/command/index.ts';
import { processStartTime } from '../../src/runtimes/process.ts';
import type { AgentSpec } from '../../src/runtimes/types.ts';
import { compiledFixture } from '../helpers/compiled-fixture.ts';
import { startMockAnthropic } from '../helpers/mock-anthropic.ts';
import { startMockMcp } from '../helpers/mock-mcp.ts';
import { startMockOpenAI } from '../helpers/mock-openai.ts';
import { gone } from '../helpers/processes.ts';
import { until } from '../helpers/warrens.ts';
import { cleanUp, type Started, startAlone } from './harness.ts';

const LEAK = 'WARREN_TEST_LEAK';
const root = mkdtempSync(join(tmpdir(), 'warren-finish-'));
const closers: Array<() => Promise<unknown>> = [];
let started: Started | undefined;

before(() => {
  process.env[LEAK] = 'server-only-secret';
});
afterEach(async () => {
  await cleanUp(started);
  started = undefined;
});
after(async () => {
  delete process.env[LEAK];
  await Promise.allSettled(closers.splice(0).map((c) => c()));
  rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
});

const spec = (over: Partial<AgentSpec>): AgentSpec => ({
  prompt: null,
  config: {},
  cwd: null,
  model: null,
  env: {},
  ...over,
});

/**
 * The agent is idle: finish, and expect `completed`, its process reported gone, nothing new
 * started to get there. `atOnce`: no process runs between turns, so the exit is reported
 * before finish() returns (an order, not a duration). The exit's bound is a timeout for a
 * hung agent, not a measure of speed.
 */
async function finishes(s: Started, atOnce = false): Promise<void> {
  const { handle, rec } = s;
  await rec.waitFor('idle', 60_000);
  const [spawned] = rec.of('spawned');
  assert.ok(spawned, 'the agent process was reported');
  const processes = rec.of('spawned').length;
  assert.ok(handle.finish, 'the handle can finish');
  handle.finish();
  if (atOnce) assert.equal(rec.of('exit').length, 1, 'the exit was reported by finish() itself');
  const exit = await rec.waitFor('exit', 20_000);
  assert.equal(exit.result.reason, 'completed', JSON.stringify(exit.result));
  assert.equal(rec.of('spawned').length, processes, 'finishing started no process');
  await until(() => gone(spawned.proc.pid), 20_000, 'the agent process to be gone');
  await rec.waitFor('exited', 20_000, (e) => e.pid === spawned.proc.pid);
  assert.equal(rec.of('exit').length, 1, 'one exit report');
}

/** What `spawned` said, checked against /proc while the process runs; and its environment is clean. */
function checkRecord(s: Started): void {
  const [spawned] = s.rec.of('spawned');
  assert.ok(spawned);
  const { pid, pgid, startTime } = spawned.proc;
  assert.equal(pgid, pid, 'an agent leads its own process group');
  assert.match(String(startTime), /^\d+$/);
  assert.equal(startTime, processStartTime(pid));
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  assert.ok(environ.some((e) => e.startsWith('WARREN_SESSION_ID=')));
  assert.ok(!environ.some((e) => e.startsWith(`${LEAK}=`)), 'a server-only variable reached the agent');
}

describe('finish', () => {
  it('command: closes stdin; the agent exits 0 on EOF → completed', async () => {
    const agent = [
      'process.stdout.write(\'{"warren":"idle"}\\n\');',
      "process.stdin.on('data', () => {}).on('end', () => process.exit(0));",
    ].join('');
    started = await startAlone(new CommandRuntime(), {
      spec: spec({ config: { command: [process.execPath, '-e', agent] } }),
    });
    await started.rec.waitFor('idle');
    checkRecord(started);
    await finishes(started);
  });

  it('claude-code: ends the CLI input; it exits 0 → completed', { timeout: 90_000 }, async () => {
    const model = await startMockAnthropic(() => ({ text: 'hi from claude' }));
    const mcp = await startMockMcp();
    closers.push(model.close, mcp.close);
    const home = join(root, 'claude-home');
    const cwd = join(root, 'claude-work');
    mkdirSync(home);
    mkdirSync(cwd);
    started = await startAlone(new ClaudeCodeRuntime(), {
      spec: spec({
        prompt: 'say hi',
        cwd,
        env: { ...model.env(), HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') },
      }),
      mcpUrl: `${mcp.base}/mcp`,
    });
    await started.rec.waitFor('idle', 60_000);
    assert.deepEqual(
      started.rec.of('output').map((o) => o.text),
      ['hi from claude'],
    );
    checkRecord(started);
    await finishes(started);
  });

  it('codex: no process between turns → completed at once', { timeout: 90_000 }, async () => {
    const model = await startMockOpenAI(() => 'done');
    closers.push(model.close);
    const homeRoot = join(root, 'codex-homes');
    started = await startAlone(
      new CodexRuntime({
        baseUrl: model.baseUrl,
        model: 'mock-model',
        homeRoot,
        provider: { request_max_retries: 0, stream_max_retries: 0 },
      }),
      { spec: spec({ prompt: 'hi' }) },
    );
    await started.rec.waitFor('idle', 60_000);
    // One process for the turn, reported and then gone.
    const [turn] = started.rec.of('spawned');
    assert.ok(turn);
    await started.rec.waitFor('exited', 20_000, (e) => e.pid === turn.proc.pid);
    await finishes(started, true);
  });

  it('acp: closes the connection and stops the agent → completed', { timeout: 60_000 }, async () => {
    const fixture = fileURLToPath(new URL('../fixtures/acp-agent.ts', import.meta.url));
    const cwd = join(root, 'acp-work');
    mkdirSync(cwd);
    started = await startAlone(new AcpRuntime(), {
      spec: spec({
        cwd,
        config: { command: [process.execPath, compiledFixture(fixture)] },
        env: { ACP_FIXTURE_STATE: join(root, 'acp-state') },
      }),
    });
    await started.rec.waitFor('idle', 30_000);
    checkRecord(started);
    await finishes(started);
  });
});
