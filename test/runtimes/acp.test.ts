import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AcpRuntime } from '../../src/runtimes/acp/index.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { compiledFixture } from '../helpers/compiled-fixture.ts';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { gone } from '../helpers/processes.ts';
import {
  asSession,
  call,
  eventsOf,
  forEachWarren,
  outputs,
  until,
  type WarrenTarget,
  waitStatus,
} from '../helpers/warrens.ts';

/**
 * The `acp` runtime against a real ACP agent in a child process: test/fixtures/acp-agent.ts,
 * built on the SDK's agent side (see its header for what each prompt makes it do).
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/acp-agent.ts', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/warren.js', import.meta.url));
const fixture = [process.execPath, compiledFixture(FIXTURE)];

const root = mkdtempSync(join(tmpdir(), 'warren-acp-'));
const pids = new Set<number>();
after(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
});

let n = 0;
/** A fresh working directory and fixture state directory. */
function dirs(): { cwd: string; state: string } {
  const base = join(root, `t${++n}`);
  const cwd = join(base, 'work');
  const state = join(base, 'state');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(state, { recursive: true });
  return { cwd, state };
}

const T = { timeout: 60_000 };

async function outputStarting(w: Warren, id: string, prefix: string, ms = 20_000): Promise<string> {
  return until(
    async () => (await outputs(w, id)).find((t) => t.startsWith(prefix)),
    ms,
    `${id} to say "${prefix}…"`,
  );
}

const stateOf = async (w: Warren, id: string) => {
  const row = await w.store.reader
    .selectFrom('sessions')
    .select('runtime_state')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return JSON.parse(row.runtime_state ?? 'null') as Record<string, unknown> | null;
};

function spawnBody(
  prompt: string | null,
  d: { cwd: string; state: string },
  extra: Record<string, unknown> = {},
) {
  const { env, config, ...rest } = extra as {
    env?: Record<string, string>;
    config?: Record<string, unknown>;
  };
  return {
    runtime: 'acp',
    command: fixture,
    ...(prompt !== null ? { prompt } : {}),
    cwd: d.cwd,
    env: { ACP_FIXTURE_STATE: d.state, ...env },
    ...(config ? { config } : {}),
    ...rest,
  };
}

async function spawnAcp(w: Warren, prompt: string | null, d: { cwd: string; state: string }, extra = {}) {
  const r = await call(w, 'ipc_spawn', spawnBody(prompt, d, extra));
  return r.session.id as string;
}

const open = (t: WarrenTarget, opts: Parameters<WarrenTarget['open']>[0] = {}) =>
  t.open({ ...opts, runtimes: [new AcpRuntime()] });
const openHttp = (t: WarrenTarget) => startHttp(t, { runtimes: [new AcpRuntime()] });

forEachWarren('acp runtime', (t) => {
  it(
    'a prompt is one turn: streamed text is one output per message, tool calls, plan and usage are logged, then idle',
    T,
    async () => {
      const w = await open(t);
      const d = dirs();
      const id = await spawnAcp(w, 'hello world', d);
      await waitStatus(w, id, 'idle', 20_000);
      const events = await eventsOf(w, id);
      const out = events.filter((e) => e.type === 'session.output').map((e) => e.payload.text);
      assert.deepEqual(out, ['echo: hello world [turn 1 load 0]'], 'chunks are coalesced into one message');

      const types = events.map((e) => e.type);
      const at = (type: string) => types.indexOf(type);
      const started = events.find((e) => e.type === 'session.acp_session')!;
      assert.equal(started.payload.how, 'new');
      assert.equal(started.payload.resumed, false);
      assert.deepEqual(started.payload.agent, { name: 'acp-fixture', version: '1.0.0' });
      assert.equal(started.payload.mcp, 'none', 'no HTTP surface, so no MCP server to offer');

      const plan = events.find((e) => e.type === 'session.plan')!;
      assert.deepEqual(
        (plan.payload.entries as Array<{ content: string }>).map((x) => x.content),
        ['look it up', 'answer'],
      );
      const thought = events.find((e) => e.type === 'session.thought')!;
      assert.equal(thought.payload.text, 'thinking about hello world');
      const call_ = events.find((e) => e.type === 'session.tool_call')!;
      assert.equal(call_.payload.toolCallId, 'look-1');
      assert.equal(call_.payload.title, 'look up');
      assert.equal(call_.payload.kind, 'read');
      assert.deepEqual(call_.payload.input, { query: 'hello world' });
      const upd = events.find((e) => e.type === 'session.tool_update')!;
      assert.equal(upd.payload.status, 'in_progress');
      const result = events.find((e) => e.type === 'session.tool_result')!;
      assert.equal(result.payload.toolCallId, 'look-1');
      assert.equal(result.payload.status, 'completed');
      assert.equal(result.payload.output, 'found: hello world');
      const usage = events.filter((e) => e.type === 'session.usage').map((e) => e.payload);
      assert.ok(usage.some((u) => u.costUsd === 0.01));
      assert.ok(usage.some((u) => u.inputTokens === 10 && u.outputTokens === 5));
      assert.ok(events.some((e) => e.type === 'session.context' && e.payload.used === 100));

      // In the order the agent made them; idle last.
      assert.ok(at('session.plan') < at('session.thought'));
      assert.ok(at('session.thought') < at('session.tool_call'));
      assert.ok(at('session.tool_result') < at('session.output'));
      const idle = events.findIndex((e) => e.type === 'session.status' && e.payload.to === 'idle');
      assert.ok(at('session.output') < idle, 'the message is logged before the turn ends');

      const st = await stateOf(w, id);
      assert.match(String(st?.acpSessionId), /^fx-/);
      assert.equal(st?.costUsd, 0.01);
      const s = (await call(w, 'session_show', { id })).session;
      assert.equal(s.lastMessage, 'echo: hello world [turn 1 load 0]');
      assert.equal(s.usage.inputTokens, 10);
      await call(w, 'kill', { id });
    },
  );

  it(
    'send is the next prompt: input is logged with its seqs and acknowledged when the turn ends',
    T,
    async () => {
      const w = await open(t);
      const d = dirs();
      const id = await spawnAcp(w, 'one', d);
      await waitStatus(w, id, 'idle', 20_000);
      const turns = (await call(w, 'session_show', { id })).session.turns;
      const sent = await call(w, 'send', { id, text: 'two' });
      const second = await outputStarting(w, id, 'echo: [message');
      assert.match(second, /\] two \[turn 2 load 0\]$/);
      assert.ok(second.includes(`seq=${sent.seq}`), second);
      await waitStatus(w, id, 'idle');
      const events = await eventsOf(w, id);
      const input = events.find((e) => e.type === 'session.input')!;
      assert.deepEqual(input.payload.seqs, [sent.seq]);
      assert.match(String(input.payload.text), /two/);
      assert.ok(events.some((e) => e.type === 'session.tool_call' && e.payload.toolCallId === 'look-2'));
      const s = (await call(w, 'session_show', { id })).session;
      assert.ok(s.turns > turns);
      assert.ok(
        Math.abs(s.usage.costUsd - 0.02) < 1e-9,
        `cost is summed from cumulative updates: ${s.usage.costUsd}`,
      );
      const stdin = await until(async () => {
        const fds = (await call(w, 'ipc_list_fds', {}, asSession(id))).fds as Array<{
          streamName: string;
          pending: number;
        }>;
        const f = fds.find((x) => x.streamName === `stdin:${id}`);
        return f && f.pending === 0 ? f : undefined;
      });
      assert.equal(stdin.pending, 0);
      await call(w, 'kill', { id });
    },
  );

  it(
    'offers warren as an HTTP MCP server with the session token; fs capabilities only; applies the model and mode',
    T,
    async () => {
      const h = await openHttp(t);
      const d = dirs();
      const r = await h.api(
        'POST',
        '/v1/sessions',
        spawnBody('info', d, {
          model: 'fixture-large',
          config: { mode: 'code' },
          env: { FIXTURE_EXTRA: 'x' },
        }),
      );
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const id: string = r.json.session.id;
      const line = await outputStarting(h.warren, id, 'info ');
      const info = JSON.parse(line.slice(5));
      assert.deepEqual(info.clientCapabilities.fs, { readTextFile: true, writeTextFile: true });
      assert.equal(info.clientCapabilities.terminal, false);
      assert.deepEqual(info.mcpServers, [
        {
          type: 'http',
          name: 'warren',
          url: `${h.url}/mcp`,
          headers: [{ name: 'Authorization', value: `Bearer ${h.tokenOf(id)}` }],
        },
      ]);
      assert.equal(info.sessionCwd, d.cwd);
      assert.equal(info.processCwd, d.cwd);
      assert.equal(info.model, 'fixture-large');
      assert.equal(info.mode, 'code');
      assert.deepEqual(info.env, { session: id, extra: 'x' });
      const events = await eventsOf(h.warren, id);
      const model = events.find((e) => e.type === 'session.model')!;
      assert.equal(model.payload.applied, true);
      assert.equal(model.payload.model, 'fixture-large');
      assert.equal(events.find((e) => e.type === 'session.acp_session')!.payload.mcp, 'http');
      await h.api('POST', `/v1/sessions/${id}/kill`, {});
    },
  );

  it(
    'an agent without HTTP MCP gets the stdio shim (`warren mcp`); an unknown model is logged as not applied',
    T,
    async () => {
      const h = await openHttp(t);
      const d = dirs();
      const r = await h.api(
        'POST',
        '/v1/sessions',
        spawnBody('info', d, { model: 'gpt-nonexistent', env: { ACP_FIXTURE_MCP: 'stdio' } }),
      );
      const id: string = r.json.session.id;
      const info = JSON.parse((await outputStarting(h.warren, id, 'info ')).slice(5));
      assert.deepEqual(info.mcpServers, [
        {
          name: 'warren',
          command: process.execPath,
          args: [BIN, 'mcp'],
          env: [
            { name: 'WARREN_URL', value: h.url },
            { name: 'WARREN_TOKEN', value: h.tokenOf(id) },
          ],
        },
      ]);
      assert.equal(info.model, 'fixture-small');
      const model = (await eventsOf(h.warren, id)).find((e) => e.type === 'session.model')!;
      assert.equal(model.payload.applied, false);
      assert.match(String(model.payload.reason), /fixture-small, fixture-large/);
      await h.api('POST', `/v1/sessions/${id}/kill`, {});
    },
  );

  it('permission requests are denied by default, allowed by config, and logged either way', T, async () => {
    const w = await open(t);
    const denied = await spawnAcp(w, 'permission', dirs());
    assert.equal(await outputStarting(w, denied, 'permission:'), 'permission: no');
    await waitStatus(w, denied, 'idle');
    const ev = (await eventsOf(w, denied)).find((e) => e.type === 'session.permission')!;
    assert.equal(ev.payload.decision, 'denied');
    assert.equal(ev.payload.policy, 'deny');
    assert.equal(ev.payload.optionId, 'no');
    assert.equal(ev.payload.title, 'delete the build directory');
    assert.equal(ev.payload.kind, 'delete');
    const failed = (await eventsOf(w, denied)).find((e) => e.type === 'session.tool_result')!;
    assert.equal(failed.payload.status, 'failed');

    const allowed = await spawnAcp(w, 'permission', dirs(), { config: { permission: 'allow' } });
    assert.equal(await outputStarting(w, allowed, 'permission:'), 'permission: yes');
    const ev2 = (await eventsOf(w, allowed)).find((e) => e.type === 'session.permission')!;
    assert.equal(ev2.payload.decision, 'allowed');
    assert.equal(ev2.payload.optionId, 'yes');

    await assert.rejects(
      call(w, 'ipc_spawn', spawnBody('x', dirs(), { config: { permission: 'sometimes' } })),
      { code: 'invalid_input' },
    );
    await call(w, 'kill', { id: denied });
    await call(w, 'kill', { id: allowed });
  });

  it('file reads and writes are served inside the working directory only', T, async () => {
    const w = await open(t);
    const d = dirs();
    const outside = join(root, `outside-${n}.txt`);
    writeFileSync(outside, 'secret');
    writeFileSync(join(d.cwd, 'notes.txt'), 'inside text');
    symlinkSync(outside, join(d.cwd, 'link.txt'));
    const id = await spawnAcp(w, `read ${join(d.cwd, 'notes.txt')}`, d);
    assert.equal(await outputStarting(w, id, 'read '), 'read ok: inside text');
    await waitStatus(w, id, 'idle');

    const turn = async (text: string, prefix: string) => {
      const before = (await outputs(w, id)).length;
      await call(w, 'send', { id, text });
      return until(
        async () => {
          const o = await outputs(w, id);
          return o.slice(before).find((x) => x.startsWith(prefix));
        },
        20_000,
        `a reply to ${text}`,
      );
    };
    assert.equal(await turn(`write ${join(d.cwd, 'sub', 'new.txt')} fresh content`, 'write'), 'write ok');
    assert.equal(readFileSync(join(d.cwd, 'sub', 'new.txt'), 'utf8'), 'fresh content');
    assert.match(
      await turn(`read ${outside}`, 'read'),
      /^read error: .*outside the session's working directory/,
    );
    assert.match(await turn(`read ${join(d.cwd, 'link.txt')}`, 'read'), /^read error: .*outside/);
    assert.match(
      await turn(`write ${join(d.cwd, '..', 'escape.txt')} x`, 'write'),
      /^write error: .*outside/,
    );
    assert.ok(!existsSync(join(d.cwd, '..', 'escape.txt')));
    assert.match(await turn('read notes.txt', 'read'), /^read error: .*not an absolute path/);
    assert.equal(readFileSync(outside, 'utf8'), 'secret');

    const fs = (await eventsOf(w, id)).filter((e) => e.type === 'session.fs').map((e) => e.payload);
    assert.deepEqual(
      fs.map((f) => [f.op, f.ok, f.refused ?? null]),
      [
        ['read', true, null],
        ['write', true, null],
        ['read', false, 'outside'],
        ['read', false, 'outside'],
        ['write', false, 'outside'],
        ['read', false, 'relative'],
      ],
    );
    await call(w, 'kill', { id });
  });

  it(
    'a JSON-RPC error on the prompt crashes the session with the stderr tail; the process is disposed of',
    T,
    async () => {
      const w = await open(t);
      const id = await spawnAcp(w, 'grandchild', dirs());
      const p = JSON.parse((await outputStarting(w, id, 'pids ')).slice(5)) as {
        agent: number;
        grandchild: number;
      };
      pids.add(p.agent);
      pids.add(p.grandchild);
      await waitStatus(w, id, 'idle');
      await call(w, 'send', { id, text: 'fail' });
      await waitStatus(w, id, 'stopped', 20_000);
      const s = (await call(w, 'session_show', { id })).session;
      assert.equal(s.endReason, 'crashed');
      const end = (await eventsOf(w, id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      )!;
      assert.match(String(end.payload.error), /session\/prompt failed: .*the fixture was asked to fail/);
      assert.match(String(end.payload.stderrTail), /fixture: failing on purpose/);
      await until(
        () => gone(p.agent) && gone(p.grandchild),
        20_000,
        'the agent and its grandchild to be gone',
      );
    },
  );

  it('an agent that exits mid-turn crashes the session with its exit code and stderr tail', T, async () => {
    const w = await open(t);
    const id = await spawnAcp(w, 'exit 3', dirs());
    await waitStatus(w, id, 'stopped', 20_000);
    const end = (await eventsOf(w, id)).find(
      (e) => e.type === 'session.status' && e.payload.to === 'stopped',
    )!;
    assert.equal(end.payload.endReason, 'crashed');
    assert.equal(end.payload.code, 3);
    assert.match(String(end.payload.error), /exited with code 3/);
    assert.match(String(end.payload.stderrTail), /fixture: exiting with code 3/);
    // What it said before dying is kept.
    assert.deepEqual(await outputs(w, id), ['exiting']);
  });

  it('a refusal ends the turn (idle), with the stop reason logged', T, async () => {
    const w = await open(t);
    const id = await spawnAcp(w, 'refuse', dirs());
    await waitStatus(w, id, 'idle', 20_000);
    const events = await eventsOf(w, id);
    assert.deepEqual(await outputs(w, id), ['I will not.']);
    assert.equal(events.find((e) => e.type === 'session.turn_end')!.payload.stopReason, 'refusal');
    await call(w, 'kill', { id });
  });

  it('resume after a warren restart uses session/load: history is restored, not re-logged', T, async () => {
    const loc = t.location();
    const d = dirs();
    const w1 = await open(t, { location: loc });
    const id = await spawnAcp(w1, 'first', d);
    await waitStatus(w1, id, 'idle', 20_000);
    const saved = await stateOf(w1, id);
    await w1.close();

    const w2 = await open(t, { location: loc });
    await waitStatus(w2, id, 'idle', 20_000);
    const started = (await eventsOf(w2, id)).filter((e) => e.type === 'session.acp_session');
    assert.equal(started.length, 2);
    assert.equal(started[1]!.payload.how, 'load');
    assert.equal(started[1]!.payload.resumed, true);
    assert.equal(started[1]!.payload.historyRestored, true);
    assert.equal(started[1]!.payload.acpSessionId, saved?.acpSessionId);
    assert.equal(started[1]!.payload.replayed, 2, 'the replayed user and agent messages');
    assert.deepEqual(
      await outputs(w2, id),
      ['echo: first [turn 1 load 0]'],
      'replayed history is not logged again',
    );
    await call(w2, 'send', { id, text: 'again' });
    const again = await outputStarting(w2, id, 'echo: [message');
    assert.match(again, /again \[turn 2 load 1\]$/);
    await call(w2, 'kill', { id });
  });

  it('resume without loadSession starts a new ACP session and says history was not restored', T, async () => {
    const loc = t.location();
    const d = dirs();
    const w1 = await open(t, { location: loc });
    const id = await spawnAcp(w1, 'first', d, { env: { ACP_FIXTURE_NO_LOAD: '1' } });
    await waitStatus(w1, id, 'idle', 20_000);
    const before = await stateOf(w1, id);
    await w1.close();

    const w2 = await open(t, { location: loc });
    await waitStatus(w2, id, 'idle', 20_000);
    const started = (await eventsOf(w2, id)).filter((e) => e.type === 'session.acp_session');
    assert.equal(started[1]!.payload.how, 'new');
    assert.equal(started[1]!.payload.historyRestored, false);
    assert.match(String(started[1]!.payload.note), /history was not restored/);
    assert.notEqual((await stateOf(w2, id))?.acpSessionId, before?.acpSessionId);
    await call(w2, 'send', { id, text: 'again' });
    assert.match(await outputStarting(w2, id, 'echo: [message'), /again \[turn 1 load 0\]$/);
    await call(w2, 'kill', { id });
  });

  it(
    'a failed session/load falls back to a new session; a spawn without a prompt is idle at once',
    T,
    async () => {
      const loc = t.location();
      const d = dirs();
      const w1 = await open(t, { location: loc });
      const id = await spawnAcp(w1, null, d);
      await waitStatus(w1, id, 'idle', 20_000);
      assert.deepEqual(await outputs(w1, id), []);
      const saved = String((await stateOf(w1, id))?.acpSessionId);
      await w1.close();
      rmSync(join(d.state, `${saved}.json`)); // the agent lost it

      const w2 = await open(t, { location: loc });
      await waitStatus(w2, id, 'idle', 20_000);
      const started = (await eventsOf(w2, id)).filter((e) => e.type === 'session.acp_session');
      assert.equal(started[1]!.payload.how, 'new');
      assert.match(String(started[1]!.payload.note), /session\/load failed: .*history was not restored/);
      assert.notEqual((await stateOf(w2, id))?.acpSessionId, saved);
      await call(w2, 'kill', { id });
    },
  );

  it('an agent that exits 0 between turns completes the session', T, async () => {
    const w = await open(t);
    const id = await spawnAcp(w, 'quit', dirs());
    await waitStatus(w, id, 'stopped', 20_000);
    const s = (await call(w, 'session_show', { id })).session;
    assert.equal(s.endReason, 'completed');
    assert.equal(s.lastMessage, 'bye');
  });

  it(
    'kill mid-turn sends session/cancel, keeps the partial message, and takes down the process group',
    T,
    async () => {
      const w = await open(t);
      const d = dirs();
      const id = await spawnAcp(w, 'grandchild', d);
      const p = JSON.parse((await outputStarting(w, id, 'pids ')).slice(5)) as {
        agent: number;
        grandchild: number;
      };
      pids.add(p.agent);
      pids.add(p.grandchild);
      await waitStatus(w, id, 'idle');
      assert.ok(!gone(p.agent) && !gone(p.grandchild));
      await call(w, 'send', { id, text: 'slow' });
      await waitStatus(w, id, 'running');
      const acpSessionId = String((await stateOf(w, id))?.acpSessionId);
      // The turn has started streaming; then kill.
      await until(async () => (await eventsOf(w, id)).some((e) => e.type === 'session.input'));
      await new Promise((r) => setTimeout(r, 300));
      const r = await call(w, 'kill', { id });
      assert.equal(r.signal, 'SIGKILL');
      await waitStatus(w, id, 'stopped');
      assert.equal((await call(w, 'session_show', { id })).session.endReason, 'killed');
      await until(() => gone(p.agent) && gone(p.grandchild), 20_000, 'agent and grandchild to be gone');
      assert.ok(existsSync(join(d.state, `cancelled-${acpSessionId}`)), 'the agent got session/cancel');
      // Flushed on stop, recorded a moment later: wait for the write, not for luck.
      await until(
        async () => (await outputs(w, id)).includes('working slowly'),
        5000,
        'the partial message to be kept',
      );
    },
  );

  it(
    'a missing command fails the spawn with runtime_unavailable naming it; no command is invalid_input',
    T,
    async () => {
      const h = await openHttp(t);
      const before = await h.head();
      const missing = join(root, 'no-such-acp-agent');
      for (const command of ['warren-acp-agent-not-installed --stdio', [missing, '--flag']]) {
        const r = await h.api('POST', '/v1/sessions', { runtime: 'acp', command });
        assert.equal(r.status, 422, JSON.stringify(r.json));
        assert.equal(r.json.error.code, 'runtime_unavailable');
        const name = Array.isArray(command) ? command[0]! : command.split(' ')[0]!;
        assert.ok(r.json.error.message.includes(name), r.json.error.message);
        assert.equal(r.json.error.details.missing, name);
        assert.equal(r.json.error.details.runtime, 'acp');
      }
      const none = await h.api('POST', '/v1/sessions', { runtime: 'acp' });
      assert.equal(none.status, 400);
      assert.equal(none.json.error.code, 'invalid_input');
      assert.equal(await h.head(), before, 'no session was written');
    },
  );

  it('an agent that dies before answering initialize crashes the spawn with its stderr', T, async () => {
    const w = await open(t);
    const d = dirs();
    const script = join(d.cwd, 'bad-agent.mjs');
    writeFileSync(script, "process.stderr.write('bad agent: no API key configured\\n'); process.exit(2);\n");
    const id = (
      await call(w, 'ipc_spawn', { runtime: 'acp', command: [process.execPath, script], cwd: d.cwd })
    ).session.id as string;
    await waitStatus(w, id, 'stopped', 20_000);
    const end = (await eventsOf(w, id)).find(
      (e) => e.type === 'session.status' && e.payload.to === 'stopped',
    )!;
    assert.equal(end.payload.endReason, 'crashed');
    assert.match(String(end.payload.error), /could not start: initialize failed: .*exited with code 2/);
    assert.match(String(end.payload.stderrTail), /no API key configured/);
  });

  it('the agent reaches warren over the MCP server it was given and calls ipc_list_fds', T, async () => {
    const h: HttpWarren = await openHttp(t);
    const r = await h.api('POST', '/v1/sessions', spawnBody('mcp', dirs()));
    const id: string = r.json.session.id;
    const reply = JSON.parse((await outputStarting(h.warren, id, 'mcp ')).slice(4)) as {
      tools?: string[];
      isError?: boolean;
      structured?: { fds: Array<{ holder: string; streamName: string }> };
      error?: string;
    };
    assert.equal(reply.error, undefined, JSON.stringify(reply));
    assert.ok(reply.tools?.includes('ipc_list_fds'));
    assert.equal(reply.isError, false);
    assert.ok(reply.structured!.fds.some((f) => f.streamName === `stdin:${id}`));
    for (const f of reply.structured!.fds) assert.equal(f.holder, id);
    // In warren's log: the agent's report of the MCP call, and its result.
    const events = await eventsOf(h.warren, id);
    const tc = events.find(
      (e) => e.type === 'session.tool_call' && e.payload.title === 'warren: ipc_list_fds',
    );
    assert.ok(tc, 'the MCP call is in the log');
    const res = events.find(
      (e) => e.type === 'session.tool_result' && e.payload.toolCallId === tc.payload.toolCallId,
    )!;
    assert.equal(res.payload.status, 'completed');
    assert.match(JSON.stringify(res.payload.output), /stdin:/);
    await h.api('POST', `/v1/sessions/${id}/kill`, {});
  });
});
