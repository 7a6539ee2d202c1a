import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { execArgs, mergeSettings, toml } from '../../src/runtimes/codex/args.ts';
import { settingsOf } from '../../src/runtimes/codex/config.ts';

/** The `codex exec` command line the codex runtime builds (no process is started here). */
describe('codex exec arguments', () => {
  it('a first turn: exec --json with cwd, model, sandbox, the overrides, prompt on stdin', () => {
    const args = execArgs({
      settings: {
        baseUrl: 'http://127.0.0.1:9/v1',
        apiKeyEnv: 'MY_KEY',
        provider: { request_max_retries: 0 },
      },
      cwd: '/work/x',
      model: 'm1',
      threadId: null,
      mcp: { url: 'http://127.0.0.1:7700/mcp', tokenEnv: 'WARREN_TOKEN', tools: ['ipc_read', 'ipc_write'] },
    });
    assert.deepEqual(args, [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--cd',
      '/work/x',
      '--model',
      'm1',
      '--sandbox',
      'workspace-write',
      '-c',
      'approval_policy="never"',
      '-c',
      'analytics.enabled=false',
      '-c',
      'features.plugins=false',
      '-c',
      'features.shell_snapshot=false',
      '-c',
      'web_search="disabled"',
      '-c',
      'check_for_update_on_startup=false',
      '-c',
      'model_provider="warren"',
      '-c',
      'model_providers.warren.name="warren"',
      '-c',
      'model_providers.warren.base_url="http://127.0.0.1:9/v1"',
      '-c',
      'model_providers.warren.wire_api="responses"',
      '-c',
      'model_providers.warren.env_key="MY_KEY"',
      '-c',
      'model_providers.warren.request_max_retries=0',
      '-c',
      'mcp_servers.warren.url="http://127.0.0.1:7700/mcp"',
      '-c',
      'mcp_servers.warren.bearer_token_env_var="WARREN_TOKEN"',
      '-c',
      'mcp_servers.warren.enabled_tools=["ipc_read", "ipc_write"]',
      '-c',
      'mcp_servers.warren.default_tools_approval_mode="approve"',
      '-c',
      'mcp_servers.warren.required=true',
      '-c',
      'mcp_servers.warren.startup_timeout_sec=30',
      '-',
    ]);
  });

  it('a later turn resumes the thread; extra settings come last and may override', () => {
    const args = execArgs({
      settings: {
        sandbox: 'read-only',
        model: 'fallback',
        codexConfig: { features: { shell_snapshot: true } },
      },
      cwd: null,
      model: null,
      threadId: '01a1-thread',
      mcp: null,
    });
    assert.deepEqual(args.slice(0, 7), [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--model',
      'fallback',
      '--sandbox',
      'read-only',
    ]);
    assert.deepEqual(args.slice(-3), ['resume', '01a1-thread', '-']);
    assert.equal(args.at(-4), 'features.shell_snapshot=true');
    assert.ok(!args.some((a) => a.startsWith('mcp_servers') || a.startsWith('model_provider')));
  });

  it("a persona's system prompt is codex's developer_instructions", () => {
    const plan = { settings: {}, cwd: null, model: null, threadId: null, mcp: null };
    const args = execArgs({ ...plan, systemPrompt: 'You review "diffs".' });
    assert.ok(args.includes('developer_instructions="You review \\"diffs\\"."'), args.join(' '));
    assert.ok(!execArgs(plan).some((a) => a.startsWith('developer_instructions')));
  });

  it('TOML values: strings escaped, arrays, inline tables, odd keys quoted', () => {
    assert.equal(toml('a "quoted"\nline'), '"a \\"quoted\\"\\nline"');
    assert.equal(toml([1, true, 'x']), '[1, true, "x"]');
    assert.equal(toml({ 'X-Header': 'v', 'a.b': 1 }), '{X-Header = "v", "a.b" = 1}');
    assert.throws(() => toml(Number.NaN), { code: 'invalid_input' });
  });

  it('settings are checked and merged over the defaults', () => {
    assert.deepEqual(settingsOf({ model: 'x', sandbox: 'danger-full-access', other: 1 }), {
      model: 'x',
      sandbox: 'danger-full-access',
    });
    assert.throws(() => settingsOf({ sandbox: 'yolo' }), { code: 'invalid_input' });
    assert.throws(() => settingsOf({ baseUrl: 42 }), { code: 'invalid_input' });
    assert.throws(() => settingsOf({ codexConfig: 'no' }), { code: 'invalid_input' });
    assert.deepEqual(
      mergeSettings(
        { baseUrl: 'a', provider: { request_max_retries: 0, x: 1 } },
        { baseUrl: 'b', provider: { x: 2 } },
      ),
      { baseUrl: 'b', provider: { request_max_retries: 0, x: 2 } },
    );
  });
});
