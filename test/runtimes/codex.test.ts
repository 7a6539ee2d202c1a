import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { it } from 'node:test';
import { CodexRuntime, type CodexRuntimeOptions } from '../../src/runtimes/codex/index.ts';
import { codexAgents } from '../helpers/codex-agents.ts';
import { startHttp } from '../helpers/http.ts';
import { type MockReply, messagesOf, type RecordedRequest, toolOutputsOf } from '../helpers/mock-openai.ts';
import { call, eventsOf, forEachWarren, outputs, sessionOf, until, waitStatus } from '../helpers/warrens.ts';

/**
 * The `codex` runtime with the real codex CLI (node_modules/.bin/codex), pointed at a mock
 * Responses API on loopback: no network, no API key, no ~/.codex. Each turn is one
 * `codex exec` process; the mock sees what the CLI sends and answers what each test scripts.
 */

const { mock, homeRoot, pids: codexPids } = await codexAgents('warren-codex-test-');

const runtime = (extra: CodexRuntimeOptions = {}) =>
  new CodexRuntime({
    baseUrl: mock.baseUrl,
    model: 'mock-model',
    homeRoot,
    // A failed request fails the turn at once (codex retries 4xx/5xx otherwise).
    provider: { request_max_retries: 0, stream_max_retries: 0 },
    ...extra,
  });

/** After a test: no codex process left, no CODEX_HOME left. */
async function assertClean(): Promise<void> {
  await until(() => codexPids().length === 0, 20_000, 'every codex process to be gone');
  await until(() => readdirSync(homeRoot).length === 0, 20_000, 'every CODEX_HOME to be removed');
}

/** The last user message of a request: the input of the turn it belongs to. */
const lastUser = (r: RecordedRequest) => messagesOf(r, 'user').at(-1) ?? '';

forEachWarren(
  'codex runtime',
  (t) => {
    it('answers its prompt, reports usage and idles; a send is a second turn on the same thread', {
      timeout: 90_000,
    }, async () => {
      mock.script = (r) => ({
        text: `reply ${r.index}: ${lastUser(r)}`,
        usage: { input_tokens: 100 + r.index, output_tokens: 7, cached_tokens: 3 },
      });
      const h = await startHttp(t, { runtimes: [runtime()] });
      const r = await h.api('POST', '/v1/sessions', {
        runtime: 'codex',
        prompt: 'say hello',
        title: 'codex',
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const id: string = r.json.session.id;
      assert.equal(r.json.session.runtime, 'codex');

      await waitStatus(h.warren, id, 'idle', 30_000);
      assert.deepEqual(await outputs(h.warren, id), ['reply 0: say hello']);
      const s1 = await sessionOf(h.warren, id);
      assert.equal(s1.lastMessage, 'reply 0: say hello');
      assert.equal(s1.usage.inputTokens, 100);
      assert.equal(s1.usage.outputTokens, 7);

      // What reached the model: the prompt as the user's message, streamed.
      assert.equal(mock.requests.length, 1);
      const first = mock.requests[0]!;
      assert.equal(first.body.stream, true);
      assert.equal(first.body.model, 'mock-model');
      assert.equal(lastUser(first), 'say hello');
      // No API key is configured, so none is sent; nothing but /v1/responses was asked for.
      assert.equal(first.headers.authorization, undefined);
      assert.deepEqual(mock.unknown, []);

      const sent = await h.api('POST', `/v1/sessions/${id}/send`, { text: 'and again' });
      assert.equal(sent.status, 200, JSON.stringify(sent.json));
      await until(async () => (await outputs(h.warren, id)).length === 2, 30_000, 'the second answer');
      await waitStatus(h.warren, id, 'idle', 20_000);
      const second = mock.requests[1]!;
      // The second turn resumed the thread: same thread id, and the whole conversation so far.
      assert.equal(second.headers['thread-id'], first.headers['thread-id']);
      const users = messagesOf(second, 'user');
      assert.ok(users.includes('say hello'), JSON.stringify(users));
      assert.match(users.at(-1)!, /and again/);
      assert.match(users.at(-1)!, new RegExp(`seq=${sent.json.seq}`));
      assert.deepEqual(messagesOf(second, 'assistant'), ['reply 0: say hello']);
      assert.match((await outputs(h.warren, id))[1]!, /^reply 1: .*and again/);

      const events = await eventsOf(h.warren, id);
      const input = events.find((e) => e.type === 'session.input');
      assert.deepEqual(input?.payload.seqs, [sent.json.seq]);
      // codex reports thread totals; each usage event is what its turn added.
      const usage = events.filter((e) => e.type === 'session.usage').map((e) => e.payload);
      assert.deepEqual(
        usage.map((u) => [u.inputTokens, u.outputTokens, u.cachedInputTokens, u.turns]),
        [
          [100, 7, 3, 1],
          [101, 7, 3, 1],
        ],
      );
      const s2 = await sessionOf(h.warren, id);
      assert.equal(s2.usage.inputTokens, 201);
      assert.equal(s2.usage.outputTokens, 14);
      const statuses = events.filter((e) => e.type === 'session.status').map((e) => e.payload.to);
      assert.deepEqual(statuses, ['running', 'idle', 'running', 'idle']);

      // While it lives its CODEX_HOME holds the thread; killing it removes it.
      assert.equal(readdirSync(homeRoot).length, 1);
      await h.api('POST', `/v1/sessions/${id}/kill`, {});
      await waitStatus(h.warren, id, 'stopped');
      await assertClean();
    });

    it('input sent during a busy turn waits for the safe point and becomes the next turn', {
      timeout: 90_000,
    }, async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      mock.script = async (r) => {
        if (r.index === 0) await held;
        return `turn ${r.index}`;
      };
      const w = await t.open({ runtimes: [runtime()] });
      const spawned = await call(w, 'ipc_spawn', { runtime: 'codex', prompt: 'slow one' });
      const id: string = spawned.session.id;
      await until(() => mock.requests.length === 1, 30_000, 'the first request');
      assert.equal((await sessionOf(w, id)).status, 'running');
      const { seq } = await call(w, 'send', { id, text: 'queued meanwhile' });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(mock.requests.length, 1, 'no second turn while the first runs');
      release();
      await until(async () => (await outputs(w, id)).length === 2, 30_000, 'both turns');
      await waitStatus(w, id, 'idle', 20_000);
      assert.deepEqual(await outputs(w, id), ['turn 0', 'turn 1']);
      assert.match(lastUser(mock.requests[1]!), new RegExp(`seq=${seq}\\] queued meanwhile`));
      await call(w, 'kill', { id });
      await assertClean();
    });

    it('killing a session mid-turn stops its codex process and removes its CODEX_HOME', {
      timeout: 60_000,
    }, async () => {
      mock.script = () => ({ text: 'too late', delayMs: 30_000 });
      const w = await t.open({ runtimes: [runtime()] });
      const { session } = await call(w, 'ipc_spawn', { runtime: 'codex', prompt: 'take your time' });
      await until(() => mock.requests.length === 1, 30_000, 'the request');
      assert.ok(codexPids().length > 0);
      await call(w, 'kill', { id: session.id });
      await waitStatus(w, session.id, 'stopped');
      assert.equal((await sessionOf(w, session.id)).endReason, 'killed');
      await assertClean();
    });

    it('a failed model request crashes the session with the error', { timeout: 60_000 }, async () => {
      mock.script = () => ({ error: { status: 400, message: 'the flux capacitor is out of flux' } });
      const w = await t.open({ runtimes: [runtime()] });
      const { session } = await call(w, 'ipc_spawn', { runtime: 'codex', prompt: 'try' });
      await waitStatus(w, session.id, 'stopped', 30_000);
      const s = await sessionOf(w, session.id);
      assert.equal(s.endReason, 'crashed');
      const ended = (await eventsOf(w, session.id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      );
      assert.match(String(ended?.payload.error), /flux capacitor is out of flux/);
      assert.equal(ended?.payload.code, 1);
      await assertClean();
    });

    it('a response.failed event crashes the session too', { timeout: 60_000 }, async () => {
      mock.script = () => ({ error: { as: 'event', message: 'model melted', code: 'server_error' } });
      const w = await t.open({ runtimes: [runtime()] });
      const { session } = await call(w, 'ipc_spawn', { runtime: 'codex', prompt: 'try' });
      await waitStatus(w, session.id, 'stopped', 30_000);
      const ended = (await eventsOf(w, session.id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      );
      assert.equal(ended?.payload.endReason, 'crashed');
      assert.match(String(ended?.payload.error), /model melted/);
      await assertClean();
    });

    it('an error codex recovers from (a retried stream) is a notice, not a crash', {
      timeout: 60_000,
    }, async () => {
      mock.script = (r) =>
        r.index === 0 ? { error: { as: 'event', message: 'hiccup', code: 'server_error' } } : 'recovered';
      const w = await t.open({
        runtimes: [runtime({ provider: { request_max_retries: 0, stream_max_retries: 1 } })],
      });
      const { session } = await call(w, 'ipc_spawn', { runtime: 'codex', prompt: 'try twice' });
      await waitStatus(w, session.id, 'idle', 30_000);
      assert.deepEqual(await outputs(w, session.id), ['recovered']);
      assert.equal(mock.requests.length, 2);
      const notices = (await eventsOf(w, session.id)).filter((e) => e.type === 'session.notice');
      assert.ok(
        notices.some((n) => /Reconnecting/.test(String(n.payload.message))),
        JSON.stringify(notices),
      );
      await call(w, 'kill', { id: session.id });
      await assertClean();
    });

    it('codex exiting non-zero (a bad setting) crashes the session with its stderr', {
      timeout: 60_000,
    }, async () => {
      const w = await t.open({ runtimes: [runtime()] });
      const { session } = await call(w, 'ipc_spawn', {
        runtime: 'codex',
        prompt: 'never sent',
        config: { codexConfig: { approval_policy: 'sometimes' } },
      });
      await waitStatus(w, session.id, 'stopped', 30_000);
      const ended = (await eventsOf(w, session.id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      );
      assert.equal(ended?.payload.endReason, 'crashed');
      assert.equal(ended?.payload.code, 1);
      assert.match(String(ended?.payload.error), /exited with code 1/);
      assert.match(String(ended?.payload.stderrTail), /approval_policy/);
      assert.equal(mock.requests.length, 0);
      await assertClean();
    });

    it('warren’s MCP server is required: a turn that cannot reach it crashes, and the model is never asked', {
      timeout: 90_000,
    }, async () => {
      const h = await startHttp(t, { runtimes: [runtime()] });
      mock.script = () => ({ text: 'ran without warren' });
      // A path warren does not serve (404) in place of its /mcp: codex cannot start the server.
      const url = `${h.url}/not-mcp`;
      const r = await h.api('POST', '/v1/sessions', {
        runtime: 'codex',
        prompt: 'list your fds',
        config: { codexConfig: { mcp_servers: { warren: { url, startup_timeout_sec: 5 } } } },
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const id: string = r.json.session.id;
      await waitStatus(h.warren, id, 'stopped', 60_000);
      const ended = (await eventsOf(h.warren, id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      );
      assert.equal(ended?.payload.endReason, 'crashed');
      assert.match(String(ended?.payload.stderrTail), /required MCP server/);
      assert.equal(mock.requests.length, 0, 'no turn ran without warren’s tools');
      await assertClean();
    });

    it('a missing codex binary fails the spawn with runtime_unavailable, writing nothing', {
      timeout: 30_000,
    }, async () => {
      const h = await startHttp(t, { runtimes: [runtime()] });
      const before = await h.head();
      const r = await h.api('POST', '/v1/sessions', {
        runtime: 'codex',
        prompt: 'hi',
        config: { codexPath: '/nonexistent/bin/codex' },
      });
      assert.equal(r.status, 422, JSON.stringify(r.json));
      assert.equal(r.json.error.code, 'runtime_unavailable');
      assert.match(r.json.error.message, /\/nonexistent\/bin\/codex/);
      // The runtime's own default binary, and WARREN_CODEX_BIN, are checked the same way.
      const w2 = await t.open({ runtimes: [runtime({ codexPath: '/nope/codex' })] });
      await assert.rejects(call(w2, 'ipc_spawn', { runtime: 'codex', prompt: 'hi' }), {
        code: 'runtime_unavailable',
      });
      const saved = process.env.WARREN_CODEX_BIN;
      process.env.WARREN_CODEX_BIN = '/also/not/there/codex';
      try {
        await assert.rejects(call(h.warren, 'ipc_spawn', { runtime: 'codex', prompt: 'hi' }), (e: Error) => {
          assert.equal((e as { code?: string }).code, 'runtime_unavailable');
          assert.match(e.message, /WARREN_CODEX_BIN/);
          return true;
        });
      } finally {
        if (saved === undefined) delete process.env.WARREN_CODEX_BIN;
        else process.env.WARREN_CODEX_BIN = saved;
      }
      // Bad settings are invalid input.
      const bad = await h.api('POST', '/v1/sessions', { runtime: 'codex', config: { sandbox: 'yolo' } });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.code, 'invalid_input');
      assert.equal(await h.head(), before, 'no session was written');
    });

    it('resumes its thread across a warren restart', { timeout: 120_000 }, async () => {
      mock.script = (r) => `answer ${r.index} to ${lastUser(r)}`;
      const loc = t.location();
      const w1 = await t.open({ location: loc, runtimes: [runtime()] });
      const { session } = await call(w1, 'ipc_spawn', { runtime: 'codex', prompt: 'remember 42' });
      const id: string = session.id;
      await waitStatus(w1, id, 'idle', 30_000);
      await w1.close();
      // Shut down, not ended: its CODEX_HOME (the thread) is kept for the resume.
      assert.equal(readdirSync(homeRoot).length, 1);
      assert.equal(codexPids().length, 0);

      const w2 = await t.open({ location: loc, runtimes: [runtime()] });
      await waitStatus(w2, id, 'idle', 30_000);
      assert.equal(mock.requests.length, 1, 'the prompt is not asked again');
      await call(w2, 'send', { id, text: 'what was the number?' });
      await until(async () => (await outputs(w2, id)).length === 2, 30_000, 'the answer after restart');
      const again = mock.requests[1]!;
      assert.equal(again.headers['thread-id'], mock.requests[0]!.headers['thread-id']);
      const users = messagesOf(again, 'user');
      assert.ok(users.includes('remember 42'), JSON.stringify(users));
      assert.match(users.at(-1)!, /what was the number\?/);
      assert.deepEqual(messagesOf(again, 'assistant'), ['answer 0 to remember 42']);
      // Usage after the restart is still per turn, not the thread's running total.
      const usage = await until(
        async () => {
          const u = (await eventsOf(w2, id)).filter((e) => e.type === 'session.usage');
          return u.length === 2 ? u : undefined;
        },
        10_000,
        'the second usage report',
      );
      assert.deepEqual(
        usage.map((e) => e.payload.inputTokens),
        [10, 10],
      );
      await call(w2, 'kill', { id });
      await waitStatus(w2, id, 'stopped');
      await assertClean();
    });

    it('calls a warren tool over MCP; the call and its result are in the log', {
      timeout: 90_000,
    }, async () => {
      const h = await startHttp(t, { runtimes: [runtime()] });
      const script = (r: RecordedRequest): MockReply => {
        const outs = toolOutputsOf(r);
        if (outs.length === 0) {
          return {
            calls: [{ name: 'ipc_list_fds', namespace: 'mcp__warren', arguments: {}, callId: 'call_fds' }],
          };
        }
        return { text: `fds: ${outs[0]!.output}` };
      };
      mock.script = script;
      const r = await h.api('POST', '/v1/sessions', { runtime: 'codex', prompt: 'list your fds' });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const id: string = r.json.session.id;
      await waitStatus(h.warren, id, 'idle', 45_000);
      // The model saw warren's tools, named like the syscalls, in codex's MCP namespace.
      const tools = mock.requests[0]!.body.tools as Array<{
        type: string;
        name: string;
        tools?: { name: string }[];
      }>;
      const ns = tools.find((x) => x.name === 'mcp__warren');
      assert.ok(
        ns?.tools?.some((x) => x.name === 'ipc_list_fds'),
        JSON.stringify(tools.map((x) => x.name)),
      );
      const events = await eventsOf(h.warren, id);
      const callEv = events.find((e) => e.type === 'session.tool_call');
      const resultEv = events.find((e) => e.type === 'session.tool_result');
      assert.equal(callEv?.payload.syscall, 'ipc_list_fds');
      assert.equal(resultEv?.payload.status, 'completed', JSON.stringify(resultEv?.payload));
      // The tool's answer went back to the model and into its reply: the session's own fds.
      const out = toolOutputsOf(mock.requests[1]!)[0]!;
      assert.equal(out.call_id, 'call_fds');
      assert.match(out.output, new RegExp(`stdin:${id}`));
      assert.match((await outputs(h.warren, id)).at(-1)!, /^fds: /);
      await h.api('POST', `/v1/sessions/${id}/kill`, {});
      await waitStatus(h.warren, id, 'stopped');
      await assertClean();
    });
  },
  ['sqlite'],
);

it('leaves nothing behind', () => {
  assert.equal(existsSync(homeRoot), true);
  assert.deepEqual(readdirSync(homeRoot), []);
  assert.deepEqual(codexPids(), []);
});
