/**
 * An agent on a remote runner behind the model gateway: a real `warren serve`, a real `warren
 * runner` and the real `claude` CLI on it (node_modules/.bin/claude), against the mock model
 * API. The server holds the key its spawn gave; the CLI on the runner reaches the gateway
 * through the runner's tunnel with its session's token, so the key is in none of its
 * processes; the mock sees the real key; the usage logged (source gateway) is the mock's; the
 * token is refused once the session stops (its upstream released).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runDir } from '../../src/runtimes/rundir.ts';
import { type MockAnthropic, startMockAnthropic } from '../helpers/mock-anthropic.ts';
import { environOf, groupOf, procFile } from '../helpers/processes.ts';
import { startServer } from '../helpers/server.ts';
import { cleanedUp, groupAlive, spawnOn, startRunner, statusOf, until } from './helpers.ts';

const KEY = 'sk-ant-runner-gateway-key-8d21e4';
const USAGE = {
  input_tokens: 90,
  output_tokens: 5,
  cache_read_input_tokens: 200,
  cache_creation_input_tokens: 10,
};

type Event = { type: string; payload: Record<string, unknown> };

describe('an agent on a runner behind the model gateway', () => {
  const { servers, runners, dirs, groups } = cleanedUp();
  let mock: MockAnthropic | undefined;
  after(() => mock?.close());

  it('the key stays with the server; usage is the provider’s; the token dies with the session', {
    timeout: 90_000,
  }, async () => {
    // Side requests are answered by the script too: every model call has the same usage.
    mock = await startMockAnthropic(() => ({ text: 'done', usage: USAGE }), { sideRequests: 'script' });
    const m = mock;
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-runner-gateway-'));
    dirs.push(dataDir);
    const server = await startServer({ dataDir });
    servers.push(server);
    const tok = await server.api<{ token: string }>('POST', '/v1/runners', { name: 'r1' });
    assert.equal(tok.status, 200, JSON.stringify(tok.json));
    const runner = await startRunner({
      url: server.url,
      token: tok.json.token,
      name: 'r1',
      runtimes: 'claude-code',
    });
    runners.push(runner);
    const secret = await server.api('POST', '/v1/secrets/anthropic', { value: KEY });
    assert.equal(secret.status, 200, JSON.stringify(secret.json));

    const home = join(dataDir, 'home');
    const cwd = join(dataDir, 'work');
    mkdirSync(home);
    mkdirSync(cwd);
    const r = await spawnOn(server, 'runner:r1', {
      runtime: 'claude-code',
      prompt: 'hello',
      cwd,
      env: { ANTHROPIC_BASE_URL: m.url, HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') },
      secretEnv: { ANTHROPIC_API_KEY: 'anthropic' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const id = r.json.session.id;
    const events = async () =>
      (await server.api<{ events: Event[] }>('GET', `/v1/sessions/${id}/events?limit=1000`)).json.events;
    const started = await until('claude to start on the runner', async () =>
      (await events()).find((e) => e.type === 'session.claude_started'),
    );
    const pid = started.payload.pid as number;
    groups.push(pid);
    // The runner keeps the agent's private files (its MCP config) under its own run root.
    const runRoot = runDir(`wr_r1_${runner.child.pid}`);
    assert.ok(existsSync(runRoot), `${runRoot} while the agent runs`);
    await until('the first turn to end', async () =>
      (await statusOf(server, id)) === 'idle' ? true : undefined,
    );

    // Not in any of the agent's processes' environment or arguments.
    const procs = groupOf(pid);
    assert.ok(procs.includes(pid), `the CLI (${pid}) is in its group: ${procs}`);
    for (const p of procs) {
      assert.ok(!procFile(p, 'environ').includes(KEY), `key in environ of ${p}`);
      assert.ok(!procFile(p, 'cmdline').includes(KEY), `key in cmdline of ${p}`);
    }
    // The gateway through the runner's tunnel (its local endpoint, not the server's address).
    const env = environOf(pid);
    assert.equal(env.ANTHROPIC_BASE_URL, `${env.WARREN_URL}/v1/gateway/anthropic`);
    assert.notEqual(env.WARREN_URL, server.url);
    const credential = env.ANTHROPIC_API_KEY!;
    assert.equal(credential, env.WARREN_TOKEN);

    // Upstream: every model call carried the real key, never the agent's credential.
    const calls = m.requests.filter((q) => q.method === 'POST' && q.url.split('?')[0] === '/v1/messages');
    assert.ok(calls.length >= 1);
    for (const q of m.requests) assert.ok(!JSON.stringify(q.headers).includes(credential), q.url);
    for (const q of calls) assert.equal(q.headers['x-api-key'], KEY);

    // The log: one gateway usage per model call, the mock's numbers.
    const metered = (await events()).filter(
      (e) => e.type === 'session.usage' && e.payload.source === 'gateway',
    );
    assert.equal(metered.length, calls.length);
    for (const e of metered) {
      assert.equal(e.payload.inputTokens, 90 + 200 + 10);
      assert.equal(e.payload.outputTokens, 5);
      assert.equal(e.payload.provider, 'anthropic');
    }
    const s = await server.api<{ session: { usage: { inputTokens: number; outputTokens: number } } }>(
      'GET',
      `/v1/sessions/${id}`,
    );
    assert.equal(s.json.session.usage.inputTokens, 300 * calls.length);
    assert.equal(s.json.session.usage.outputTokens, 5 * calls.length);

    // The session ends: its upstream is released, its token refused, nothing sent upstream.
    assert.equal((await server.api('POST', `/v1/sessions/${id}/kill`, {})).status, 200);
    await until('stopped', async () => ((await statusOf(server, id)) === 'stopped' ? true : undefined));
    const before = m.requests.length;
    const late = await fetch(`${server.url}/v1/gateway/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': credential, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-x',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    assert.equal(late.status, 401);
    assert.equal(m.requests.length, before);
    await until('the agent group is gone', async () => (groupAlive(pid) ? undefined : true), 20_000);
    // A clean stop leaves no empty run root in the temp dir, as a server's does not.
    await runner.stop();
    assert.ok(!existsSync(runRoot), `${runRoot} is left behind`);
  });
});
