/**
 * The real `claude` CLI with its model API on a loopback port nothing listens on. The CLI
 * retries with `"error_status":null,"error":"unknown"` and never says why; warren says it
 * ("unreachable: ECONNREFUSED 127.0.0.1:<port>"). A graceful kill of such an agent ends it at
 * once, as `terminated`: it is only waiting to retry, nothing in progress could finish in its
 * grace period (docs/decisions.md).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, it } from 'node:test';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import { startMockMcp } from '../helpers/mock-mcp.ts';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { until } from '../helpers/warrens.ts';
import { cleanUp, type Started, startAlone } from './harness.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'warren-claude-unreachable-')));
const closers: Array<() => Promise<unknown>> = [];
let started: Started | undefined;
let n = 0;

afterEach(async () => {
  await cleanUp(started);
  started = undefined;
  await Promise.allSettled(closers.splice(0).map((c) => c()));
});
after(() => rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));

/** A loopback port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** The agent's environment: its own home, and a model API at `port`. */
function claudeEnv(port: number): Record<string, string> {
  const home = join(root, `home-${++n}`);
  mkdirSync(home);
  return {
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    ANTHROPIC_API_KEY: 'test',
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
  };
}

it('says why the model API is unreachable, and a stop asked while it retries ends it at once', {
  timeout: 120_000,
}, async () => {
  const port = await closedPort();
  const mcp = await startMockMcp();
  closers.push(mcp.close);
  started = await startAlone(new ClaudeCodeRuntime(), {
    spec: { prompt: 'hello', config: {}, cwd: root, model: null, env: claudeEnv(port) },
    mcpUrl: `${mcp.base}/mcp`,
  });
  const s = started;
  const cause = `unreachable: ECONNREFUSED 127.0.0.1:${port}`;
  const shown = await s.rec.waitFor('activity', 60_000, (a) => a.text !== null);
  assert.equal(shown.text, `retrying model API, attempt 1/10 (${cause})`);
  const retry = await s.rec.waitFor('event', 20_000, (e) => e.type === 'api_retry');
  assert.equal(retry.payload.error, cause);
  assert.equal(retry.payload.status, null);
  assert.equal(s.rec.of('exit').length, 0);
  // A SIGTERM's request, while the CLI only waits to retry: it ends now (in the call), saying why.
  s.handle.termAsked!();
  const [exit] = s.rec.of('exit');
  assert.ok(exit, 'ended at once');
  assert.equal(exit.result.reason, 'completed');
  assert.equal(
    exit.result.error,
    `it was only waiting to retry the model API (${cause}), so it ended at once`,
  );
});

it('a stop asked before the model API fails ends the agent when it starts waiting to retry', {
  timeout: 120_000,
}, async () => {
  const port = await closedPort();
  const mcp = await startMockMcp();
  closers.push(mcp.close);
  started = await startAlone(new ClaudeCodeRuntime(), {
    spec: { prompt: 'hello', config: {}, cwd: root, model: null, env: claudeEnv(port) },
    mcpUrl: `${mcp.base}/mcp`,
  });
  const s = started;
  // Asked while the turn is still starting (nothing retried yet): remembered, not acted on.
  s.handle.termAsked!();
  assert.equal(s.rec.of('exit').length, 0);
  const exit = await s.rec.waitFor('exit', 60_000);
  assert.equal(exit.result.reason, 'completed');
  assert.match(
    String(exit.result.error),
    /^it was only waiting to retry the model API \(.*\), so it ended at once$/,
  );
  // It did not retry on: the first retry line ended it.
  assert.equal(s.rec.of('event').filter((e) => e.type === 'api_retry').length, 0);
});

it('kill --graceful ends a claude-code agent retrying an unreachable API as terminated, not at its grace', {
  timeout: 120_000,
}, async () => {
  const port = await closedPort();
  // A grace far beyond the test's bound: an agent that waited it out would fail the wait below.
  const server: ServerProcess = await startServer({
    dataDir: join(root, 'data'),
    // Every call fails here: with the breaker on, it opens after five (Claude Code makes some
    // at once) and the retries then see its 503 rather than the unreachable endpoint this test
    // is about. The breaker has tests of its own (test/http/gateway-pacing.test.ts).
    args: ['--term-grace-ms', '600000', '--gateway-breaker-failures', '0'],
  });
  closers.push(() => server.stop());
  type Session = {
    id: string;
    status: string;
    activity: string | null;
    endReason: string | null;
    endDetail: string | null;
  };
  const spawned = await server.api<{ session: Session }>('POST', '/v1/sessions', {
    runtime: 'claude-code',
    title: 'no model',
    prompt: 'hello',
    cwd: root,
    env: claudeEnv(port),
  });
  assert.equal(spawned.status, 200, JSON.stringify(spawned.json));
  const id = spawned.json.session.id;
  const show = async () => (await server.api<{ session: Session }>('GET', `/v1/sessions/${id}`)).json.session;
  const retrying = await until(
    async () => {
      const s = await show();
      return s.activity?.includes('unreachable') ? s : null;
    },
    60_000,
    'the session to show its retry',
  );
  assert.match(retrying.activity!, new RegExp(`unreachable: ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
  const killed = await server.api<{ signal: string }>('POST', `/v1/sessions/${id}/kill`, { graceful: true });
  assert.equal(killed.status, 200, JSON.stringify(killed.json));
  assert.equal(killed.json.signal, 'SIGTERM');
  const ended = await until(
    async () => {
      const s = await show();
      return s.status === 'stopped' ? s : null;
    },
    30_000,
    'the session to stop',
  );
  assert.equal(ended.endReason, 'terminated', JSON.stringify(ended));
  assert.match(
    String(ended.endDetail),
    /^it stopped after SIGTERM: it was only waiting to retry the model API \(unreachable: ECONNREFUSED 127\.0\.0\.1:\d+\), so it ended at once$/,
  );
});
