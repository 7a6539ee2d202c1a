/**
 * Agents get a clean environment (issue 7): the allowlist, what their runtime needs, what the
 * spawn gave and warren's own variables; nothing else of the server's. The attack: a variable
 * set only in the server process must not reach a `command` agent that runs `env`.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CommandRuntime } from '../../src/runtimes/command/index.ts';
import { agentEnv } from '../../src/runtimes/env.ts';
import { cleanUp, type Started, startAlone } from './harness.ts';

const ctx = (env: Record<string, string> = {}) => ({
  sessionId: 'ses_1',
  token: 'tok',
  url: 'http://127.0.0.1:9',
  mcpUrl: 'http://127.0.0.1:9/mcp',
  spec: { prompt: null, config: {}, cwd: null, model: null, env },
});

describe('agentEnv', () => {
  it('takes only the allowlist (and locale variables) from the server', () => {
    const env = agentEnv(ctx(), {
      server: {
        PATH: '/bin',
        HOME: '/h',
        LC_ALL: 'C.UTF-8',
        AWS_SECRET_ACCESS_KEY: 'x',
        NODE_OPTIONS: '--evil',
      },
    });
    assert.deepEqual(env, {
      PATH: '/bin',
      HOME: '/h',
      LC_ALL: 'C.UTF-8',
      WARREN_SESSION_ID: 'ses_1',
      WARREN_TOKEN: 'tok',
      WARREN_URL: 'http://127.0.0.1:9',
      WARREN_MCP_URL: 'http://127.0.0.1:9/mcp',
    });
  });

  it('inherits what the runtime names; the spawn overrides settings but never warren variables', () => {
    const env = agentEnv(ctx({ DISABLE_TELEMETRY: '0', WARREN_TOKEN: 'forged', EXTRA: 'yes' }), {
      server: { ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'o' },
      inherit: ['ANTHROPIC_API_KEY', 'NOT_SET'],
      settings: { DISABLE_TELEMETRY: '1' },
      warren: { WARREN_PROMPT: 'p' },
    });
    assert.equal(env.ANTHROPIC_API_KEY, 'k');
    assert.equal(env.OPENAI_API_KEY, undefined);
    assert.equal('NOT_SET' in env, false);
    assert.equal(env.DISABLE_TELEMETRY, '0');
    assert.equal(env.EXTRA, 'yes');
    assert.equal(env.WARREN_TOKEN, 'tok');
    assert.equal(env.WARREN_PROMPT, 'p');
  });
});

describe('a command agent running env', () => {
  let started: Started | undefined;
  after(() => cleanUp(started));

  it('sees no variable that only the server has', async () => {
    process.env.WARREN_TEST_LEAK = 'server-only-secret';
    try {
      started = await startAlone(new CommandRuntime(), {
        spec: {
          prompt: null,
          config: { command: ['env'] },
          cwd: null,
          model: null,
          env: { GIVEN: 'by-spawn' },
        },
        url: 'http://127.0.0.1:9',
      });
      const exit = await started.rec.waitFor('exit', 20_000);
      assert.equal(exit.result.reason, 'completed');
    } finally {
      delete process.env.WARREN_TEST_LEAK;
    }
    const lines = started.rec.of('output').map((o) => o.text);
    const names = lines.map((l) => l.slice(0, l.indexOf('=')));
    assert.ok(lines.includes('GIVEN=by-spawn'), lines.join('\n'));
    assert.ok(lines.includes('WARREN_URL=http://127.0.0.1:9'));
    assert.ok(
      names.includes('PATH') && names.includes('WARREN_SESSION_ID') && names.includes('WARREN_TOKEN'),
    );
    assert.ok(!lines.some((l) => l.includes('server-only-secret')), 'the server-only variable leaked');
    // Nothing of the server's beyond the allowlist (locale, and warren's and the spawn's own);
    // PWD is the one the agent's starter shell sets itself (its cwd, nothing of the server's).
    const allowed =
      /^(PATH|HOME|USER|LOGNAME|SHELL|TERM|LANG|LANGUAGE|TZ|TMPDIR|LC_[A-Z_]+|WARREN_[A-Z_]+|GIVEN|PWD)$/;
    assert.deepEqual(
      names.filter((n) => !allowed.test(n)),
      [],
    );
  });
});
