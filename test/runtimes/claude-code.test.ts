/**
 * The `claude-code` runtime with the real `claude` CLI (node_modules/.bin/claude) and no
 * network: the model is `test/helpers/mock-anthropic.ts` on loopback, scripted per test.
 * Each agent gets a fresh HOME / CLAUDE_CONFIG_DIR, so nothing here touches ~/.claude.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { it } from 'node:test';
import { WORK_TOOLS } from '../../src/runtimes/claude-code/builtin-tools.ts';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { claudeAgents } from '../helpers/claude-agents.ts';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import {
  allToolResults,
  conversationText,
  firstUserText,
  lastToolResult,
  lastUserText,
  type MockAnthropic,
  type Script,
  startMockAnthropic,
} from '../helpers/mock-anthropic.ts';
import { startMockMcp } from '../helpers/mock-mcp.ts';
import { gone } from '../helpers/processes.ts';
import {
  asSession,
  call,
  type Ev,
  eventsOf,
  forEachWarren,
  outputs,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';

const { root, pids, closers, agentDirs } = claudeAgents('warren-claude-test-');

async function mock(script: Script): Promise<MockAnthropic> {
  const m = await startMockAnthropic(script);
  closers.push(() => m.close());
  return m;
}

/** warren's MCP endpoint stood in for (the scenario test uses warren's own /mcp). */
async function standInMcp(delayMs = 0): Promise<{ base: string; tokens: string[] }> {
  const m = await startMockMcp(delayMs);
  closers.push(() => m.close());
  return m;
}

/** The CLI's pid, from the runtime's `claude_started` event (the latest one). */
async function pidOf(h: HttpWarren, id: string, nth = 1): Promise<number> {
  const ev = await until(
    async () => (await eventsOf(h, id)).filter((e) => e.type === 'session.claude_started')[nth - 1],
    15_000,
    `${id} to start claude`,
  );
  const pid = ev.payload.pid as number;
  pids.add(pid);
  return pid;
}

/** The runtime's `claude_started` events of a session, once there are `n`. */
const startedEvents = (w: Warren, id: string, count: number): Promise<Ev[]> =>
  until(
    async () => {
      const evs = ((await call(w, 'session_events', { id, limit: 10_000 })).events as Ev[]).filter(
        (e) => e.type === 'session.claude_started',
      );
      return evs.length >= count ? evs : null;
    },
    15_000,
    `${id} to start claude ${count} time(s)`,
  );

const spawnClaude = async (h: HttpWarren, body: Record<string, unknown>) => {
  const r = await h.api('POST', '/v1/sessions', { runtime: 'claude-code', ...body });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.session.id as string;
};

const runtimes = () => [new ClaudeCodeRuntime()];

/** Whether the CLI has written a conversation (`projects/<cwd>/<session id>.jsonl`) under this HOME. */
const conversationSaved = (home: string): boolean =>
  readdirSync(home, { recursive: true, encoding: 'utf8' }).some(
    (f) => f.includes('projects') && f.endsWith('.jsonl'),
  );

forEachWarren(
  'claude-code runtime',
  (t) => {
    it('runs a turn per input: output, usage, idle; kill leaves no process', {
      timeout: 60_000,
    }, async () => {
      const m = await mock((req) => {
        const said = lastUserText(req);
        if (said.includes('say hi'))
          return { text: 'hi from claude', usage: { input_tokens: 7, output_tokens: 3 } };
        return { text: `you said: ${said.split('] ').pop()}`, usage: { input_tokens: 11, output_tokens: 4 } };
      });
      const mcp = await standInMcp();
      const h = await startHttp(t, { runtimes: runtimes() });
      h.warren.kernel.config.publicUrl = mcp.base;
      const dirs = agentDirs();
      const id = await spawnClaude(h, {
        prompt: 'say hi',
        cwd: dirs.cwd,
        env: { ...m.env(), ...dirs.env },
        title: 'basic',
      });
      const pid = await pidOf(h, id);
      await waitStatus(h.warren, id, 'idle', 20_000);
      assert.deepEqual(await outputs(h, id), ['hi from claude']);

      // The agent authenticated to warren's MCP endpoint with its own session token.
      assert.ok(mcp.tokens.length > 0);
      for (const tok of mcp.tokens)
        assert.equal(h.warren.tokens.verify(tok.replace(/^Bearer /, ''))?.sessionId, id);

      // Usage: this turn's tokens, the cost the CLI computed, and the model round trips.
      let s = await sessionOf(h.warren, id);
      assert.equal(s.usage.inputTokens, 7);
      assert.equal(s.usage.outputTokens, 3);
      assert.equal(s.usage.turns, 1);
      assert.ok(s.usage.costUsd > 0, JSON.stringify(s.usage));
      assert.equal(s.lastMessage, 'hi from claude');
      const started = (await eventsOf(h, id)).find((e) => e.type === 'session.claude_started')!;
      const args = started.payload.args as string[];
      for (const flag of ['-p', '--verbose', '--strict-mcp-config', '--mcp-config'])
        assert.ok(args.includes(flag), flag);
      assert.equal(args[args.indexOf('--input-format') + 1], 'stream-json');
      assert.equal(args[args.indexOf('--output-format') + 1], 'stream-json');
      assert.ok(!args.includes('--resume'));
      assert.equal(started.payload.cwd, dirs.cwd);
      // It knows where it runs: warren's note is appended to the CLI's system prompt.
      assert.ok(JSON.stringify(m.messages[0]!.system).includes(`session ${id} inside warren`));
      // Its built-in tools are the work ones: not the CLI's own tasks, schedules and workflows
      // beside warren's (tokens on every request, and two names for one thing).
      const builtins = (m.messages[0]!.tools ?? []).map((t) => t.name).filter((n) => !n.startsWith('mcp__'));
      assert.deepEqual(builtins.sort(), [...WORK_TOOLS].sort());

      // More input: a second turn in the same process, with the first in its context.
      await call(h.warren, 'send', { id, text: 'and again' });
      await until(async () => (await outputs(h, id)).length === 2, 20_000, 'a second answer');
      await waitStatus(h.warren, id, 'idle', 20_000);
      assert.match((await outputs(h, id))[1]!, /you said: and again/);
      assert.equal(m.messages.length, 2);
      const second = JSON.stringify(m.messages[1]!.messages);
      assert.ok(
        second.includes('say hi') && second.includes('hi from claude') && second.includes('and again'),
      );
      s = await sessionOf(h.warren, id);
      assert.equal(s.usage.inputTokens, 18);
      assert.equal(s.usage.outputTokens, 7);
      assert.equal(s.usage.turns, 2);
      assert.equal(s.turns, 2);
      const input = (await eventsOf(h, id)).find((e) => e.type === 'session.input')!;
      assert.match(String(input.payload.text), /and again/);
      assert.equal(gone(pid), false, 'the same process took the second turn');

      await call(h.warren, 'kill', { id });
      await waitStatus(h.warren, id, 'stopped');
      await until(() => gone(pid), 20_000, `claude (pid ${pid}) to be gone`);
      assert.equal((await sessionOf(h.warren, id)).endReason, 'killed');
    });

    it('a failed turn (is_error) crashes the session with the error', { timeout: 60_000 }, async () => {
      const m = await mock(() => ({
        error: { status: 400, type: 'invalid_request_error', message: 'the mock refuses this one' },
      }));
      const mcp = await standInMcp();
      const h = await startHttp(t, { runtimes: runtimes() });
      h.warren.kernel.config.publicUrl = mcp.base;
      const dirs = agentDirs();
      const id = await spawnClaude(h, {
        prompt: 'fail please',
        cwd: dirs.cwd,
        env: { ...m.env(), ...dirs.env },
        // The CLI's whole built-in set, on request.
        config: { tools: 'default' },
      });
      const pid = await pidOf(h, id);
      await waitStatus(h.warren, id, 'stopped', 20_000);
      const s = await sessionOf(h.warren, id);
      assert.equal(s.endReason, 'crashed');
      const end = (await eventsOf(h, id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      )!;
      assert.match(
        String(end.payload.error),
        /^the model API returned an error: .*the mock refuses this one/,
      );
      await until(() => gone(pid), 20_000, `claude (pid ${pid}) to be gone`);
      assert.equal((await outputs(h, id)).length, 0, 'an API error is not something the model said');
      const offered = (m.messages[0]!.tools ?? []).map((t) => t.name);
      assert.ok(offered.includes('TaskCreate') && offered.includes('Bash'), offered.join(','));
    });

    it('a missing CLI fails the spawn with runtime_unavailable, naming it', async () => {
      const h = await startHttp(t, { runtimes: runtimes() });
      const r = await h.api('POST', '/v1/sessions', {
        runtime: 'claude-code',
        prompt: 'hi',
        config: { claudePath: '/nonexistent/bin/claude' },
      });
      assert.equal(r.status, 422, JSON.stringify(r.json));
      assert.equal(r.json.error.code, 'runtime_unavailable');
      assert.match(r.json.error.message, /\/nonexistent\/bin\/claude/);
      const viaEnv = await h.api('POST', '/v1/sessions', {
        runtime: 'claude-code',
        prompt: 'hi',
        env: { WARREN_CLAUDE_BIN: '/also/missing/claude' },
      });
      assert.equal(viaEnv.json.error?.code, 'runtime_unavailable');
      assert.match(viaEnv.json.error.message, /\/also\/missing\/claude/);
      const bad = await h.api('POST', '/v1/sessions', {
        runtime: 'claude-code',
        config: { allowedTools: 3 },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.code, 'invalid_input');
    });

    it('warren unreachable over MCP: the session crashes saying so', { timeout: 60_000 }, async () => {
      const m = await mock(() => ({ text: 'should never be asked' }));
      const h = await startHttp(t, { runtimes: runtimes() });
      h.warren.kernel.config.publicUrl = 'http://127.0.0.1:1';
      const dirs = agentDirs();
      const id = await spawnClaude(h, { prompt: 'hello?', cwd: dirs.cwd, env: { ...m.env(), ...dirs.env } });
      const pid = await pidOf(h, id);
      await waitStatus(h.warren, id, 'stopped', 30_000);
      assert.equal((await sessionOf(h.warren, id)).endReason, 'crashed');
      const end = (await eventsOf(h, id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      )!;
      assert.match(String(end.payload.error), /^warren MCP server not connected: failed/);
      await until(() => gone(pid), 20_000, `claude (pid ${pid}) to be gone`);
      assert.equal(m.messages.length, 0, 'the prompt was never sent to the model');
    });

    it('warren too slow to connect over MCP: crashes once the wait runs out', {
      timeout: 60_000,
    }, async () => {
      const m = await mock(() => ({ text: 'should never be asked' }));
      const mcp = await standInMcp(5000);
      const h = await startHttp(t, { runtimes: runtimes() });
      h.warren.kernel.config.publicUrl = mcp.base;
      const dirs = agentDirs();
      const id = await spawnClaude(h, {
        prompt: 'hello?',
        cwd: dirs.cwd,
        env: { ...m.env(), ...dirs.env },
        config: { mcpTimeoutMs: 1500 },
      });
      const pid = await pidOf(h, id);
      await waitStatus(h.warren, id, 'stopped', 30_000);
      const end = (await eventsOf(h, id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      )!;
      assert.equal(end.payload.endReason, 'crashed');
      assert.match(
        String(end.payload.error),
        /^warren MCP server not connected: still pending after 1500 ms/,
      );
      await until(() => gone(pid), 20_000, `claude (pid ${pid}) to be gone`);
      assert.equal(m.messages.length, 0);
    });

    it('an exit nobody asked for crashes the session with the stderr tail', { timeout: 60_000 }, async () => {
      const m = await mock(() => ({ text: 'unused' }));
      const mcp = await standInMcp();
      const h = await startHttp(t, { runtimes: runtimes() });
      h.warren.kernel.config.publicUrl = mcp.base;
      const dirs = agentDirs();
      const id = await spawnClaude(h, {
        prompt: 'hi',
        cwd: dirs.cwd,
        env: { ...m.env(), ...dirs.env },
        config: { args: ['--no-such-flag-for-claude'] },
      });
      await waitStatus(h.warren, id, 'stopped', 30_000);
      const end = (await eventsOf(h, id)).find(
        (e) => e.type === 'session.status' && e.payload.to === 'stopped',
      )!;
      assert.equal(end.payload.endReason, 'crashed');
      assert.match(String(end.payload.error), /^claude exited with code [1-9]/);
      assert.equal(typeof end.payload.code, 'number');
      assert.notEqual(end.payload.code, 0);
      assert.match(String(end.payload.stderrTail), /no-such-flag-for-claude/);
    });

    it('kill --graceful: it answers the SIGTERM, ends its turn and is terminated at once, not killed at the deadline', {
      timeout: 60_000,
    }, async () => {
      const m = await mock((req) =>
        lastUserText(req).includes('SIGTERM') ? { text: 'wrapping up, bye' } : { text: 'ready' },
      );
      const mcp = await standInMcp();
      const h = await startHttp(t, { runtimes: runtimes(), kernel: { termGraceMs: 60_000 } });
      h.warren.kernel.config.publicUrl = mcp.base;
      const dirs = agentDirs();
      const id = await spawnClaude(h, {
        prompt: 'get ready',
        cwd: dirs.cwd,
        env: { ...m.env(), ...dirs.env },
      });
      const pid = await pidOf(h, id);
      await waitStatus(h.warren, id, 'idle', 20_000);
      const r = await call(h.warren, 'kill', { id, graceful: true });
      assert.equal(r.signal, 'SIGTERM');
      await waitStatus(h.warren, id, 'stopped', 20_000);
      const s = await sessionOf(h.warren, id);
      // Before the 60 s grace period ran out: `terminated`, not escalated (that is `killed`,
      // after a SIGKILL signal event), and stopped before its deadline by the kernel's clock.
      assert.equal(s.endReason, 'terminated');
      const evs = (await call(h.warren, 'session_events', { id, limit: 1000 })).events as Array<{
        type: string;
        ts: number;
        payload: Record<string, unknown>;
      }>;
      assert.ok(!evs.some((e) => e.type === 'signal' && e.payload.signal === 'SIGKILL'), 'not escalated');
      const stopped = evs.find((e) => e.type === 'session.status' && e.payload.to === 'stopped');
      assert.ok(stopped && stopped.ts < r.deadline, `stopped at ${stopped?.ts}, deadline ${r.deadline}`);
      assert.ok((await outputs(h, id)).includes('wrapping up, bye'), 'it answered the SIGTERM first');
      await until(() => gone(pid), 20_000, 'claude to exit');
    });

    it('killed from outside warren: the session is suspended, not crashed, and open brings it back', {
      timeout: 60_000,
    }, async () => {
      const m = await mock(() => ({ text: 'here' }));
      const mcp = await standInMcp();
      const h = await startHttp(t, { runtimes: runtimes() });
      h.warren.kernel.config.publicUrl = mcp.base;
      const dirs = agentDirs();
      const id = await spawnClaude(h, { prompt: 'hello', cwd: dirs.cwd, env: { ...m.env(), ...dirs.env } });
      const pid = await pidOf(h, id);
      await waitStatus(h.warren, id, 'idle', 20_000);
      // The CLI writes its conversation file after the turn; killed before that, it has nothing
      // to resume (and the resume would rightly crash). Kill it once the file is there.
      await until(() => conversationSaved(dirs.home), 20_000, 'the conversation file');
      process.kill(pid, 'SIGKILL');
      await waitStatus(h.warren, id, 'suspended', 20_000);
      assert.match((await sessionOf(h.warren, id)).suspendReason, /SIGKILL from outside warren/);
      await call(h.warren, 'session_open', { id });
      const again = await pidOf(h, id, 2);
      assert.notEqual(again, pid);
      await waitStatus(h.warren, id, 'idle', 20_000);
      const started = (await eventsOf(h, id)).filter((e) => e.type === 'session.claude_started');
      assert.ok(started[1]!.payload.resume, 'resumed with --resume and its Claude session id');
      await call(h.warren, 'kill', { id });
      await until(() => gone(again), 20_000, 'claude to be gone');
    });

    it('resumes after a restart with --resume and the same conversation', { timeout: 90_000 }, async () => {
      const m = await mock((req) => ({
        text: `answer #${req.messages.filter((x) => x.role === 'user').length}`,
      }));
      const mcp = await standInMcp();
      const loc = t.location();
      const w1 = await t.open({ location: loc, runtimes: runtimes(), kernel: { publicUrl: mcp.base } });
      const dirs = agentDirs();
      const spawned = await call(w1, 'ipc_spawn', {
        runtime: 'claude-code',
        prompt: 'remember the word marmot',
        env: { ...m.env(), ...dirs.env },
        model: 'claude-mock-1',
        pipe: 'async',
      });
      const id: string = spawned.session.id;
      const started1 = await startedEvents(w1, id, 1);
      const pid1 = started1[0]!.payload.pid as number;
      pids.add(pid1);
      await waitStatus(w1, id, 'idle', 20_000);
      await w1.close();
      await until(() => gone(pid1), 20_000, 'the first claude to be gone');

      const before = mcp.tokens.length;
      const w2 = await t.open({ location: loc, runtimes: runtimes(), kernel: { publicUrl: mcp.base } });
      const started = await startedEvents(w2, id, 2);
      const pid2 = started[1]!.payload.pid as number;
      pids.add(pid2);
      assert.notEqual(pid2, pid1);
      await waitStatus(w2, id, 'idle', 20_000);
      assert.equal(m.messages.length, 1, 'a resume with nothing to say asks the model nothing');
      await call(w2, 'send', { id, text: 'which word?' });
      await until(
        async () => (await sessionOf(w2, id)).lastMessage === 'answer #2',
        20_000,
        'an answer after resume',
      );

      const [first, second] = started as [Ev, Ev];
      const args = second.payload.args as string[];
      const claudeId = second.payload.resume as string;
      assert.match(claudeId, /^[0-9a-f-]{36}$/);
      assert.equal(first.payload.resume, null);
      assert.equal(args[args.indexOf('--resume') + 1], claudeId);
      assert.equal(args[args.indexOf('--model') + 1], 'claude-mock-1');
      assert.equal(second.payload.cwd, first.payload.cwd, 'the same working directory');
      // The model sees the conversation from before the restart.
      const convo = JSON.stringify(m.messages[1]!.messages);
      assert.ok(convo.includes('remember the word marmot') && convo.includes('answer #1'), convo);
      assert.ok(convo.includes('which word?'));
      assert.equal(m.messages[1]!.model, 'claude-mock-1');
      // The same token as before the restart.
      assert.ok(mcp.tokens.length > before);
      for (const tok of mcp.tokens)
        assert.equal(w2.tokens.verify(tok.replace(/^Bearer /, ''))?.sessionId, id);
      await call(w2, 'kill', { id });
      await until(() => gone(pid2), 20_000, 'the resumed claude to be gone');
    });

    it('THE SCENARIO: a Claude Code parent spawns a Claude Code child over MCP, talks to it, hears its SIGCHLD and reaps it', {
      timeout: 120_000,
    }, async () => {
      const parentDirs = agentDirs();
      const childDirs = agentDirs();
      const REPLY = 'task done: the answer is 42';
      let model: MockAnthropic;
      const script: Script = (req) => {
        const said = conversationText(req);
        const last = lastToolResult(req);
        if (firstUserText(req).includes('CHILD:')) {
          // The child: ready at once; answers its parent's task on its pipe (fd 1).
          if (last?.name === 'mcp__warren__ipc_write') return { text: 'reported back' };
          if (lastUserText(req).includes('please do the task'))
            return { toolUses: [{ name: 'mcp__warren__ipc_write', input: { fd: 1, message: REPLY } }] };
          return { text: 'child ready' };
        }
        // The parent.
        const spawned = allToolResults(req).find((r) => r.name === 'mcp__warren__ipc_spawn');
        const fds = spawned ? (JSON.parse(spawned.text) as { pipeFd: number; lifecycleFd: number }) : null;
        const closes = allToolResults(req).filter((r) => r.name === 'mcp__warren__ipc_close');
        if (!spawned)
          return {
            text: 'spawning a child',
            toolUses: [
              {
                name: 'mcp__warren__ipc_spawn',
                input: {
                  runtime: 'claude-code',
                  prompt: 'CHILD: wait for a task from your parent',
                  title: 'kid',
                  pipe: 'async',
                  cwd: childDirs.cwd,
                  env: { ...model.env(), ...childDirs.env },
                },
              },
            ],
          };
        if (last?.name === 'mcp__warren__ipc_spawn')
          return {
            toolUses: [
              { name: 'mcp__warren__ipc_write', input: { fd: fds!.pipeFd, message: 'please do the task' } },
            ],
          };
        if (last?.name === 'mcp__warren__ipc_write') return { text: 'asked the child; waiting' };
        if (last?.name === 'mcp__warren__ipc_close' && closes.length === 1)
          return { toolUses: [{ name: 'mcp__warren__ipc_close', input: { fd: fds!.lifecycleFd } }] };
        if (last?.name === 'mcp__warren__ipc_close') return { text: 'closed my fds; the child is done' };
        // Input between turns: the child's reply, SIGCHLDs.
        const heardBack = said.includes(REPLY) && /\[SIGCHLD\][^\n]*Last message: reported back/.test(said);
        if (heardBack && closes.length === 0)
          return {
            text: 'the child answered; closing',
            toolUses: [{ name: 'mcp__warren__ipc_close', input: { fd: fds!.pipeFd } }],
          };
        return { text: 'noted' };
      };
      model = await mock(script);
      // The child's private HOME is set by its parent: the operator allows the names (grants.env).
      const h = await startHttp(t, {
        runtimes: runtimes(),
        kernel: { envAllow: ['HOME', 'CLAUDE_CONFIG_DIR'] },
      });
      const mcpCheck = await fetch(`${h.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.notEqual(mcpCheck.status, 404, 'warren serves MCP at /mcp');

      const parent = await spawnClaude(h, {
        prompt: 'PARENT: coordinate one child',
        title: 'parent',
        cwd: parentDirs.cwd,
        env: { ...model.env(), ...parentDirs.env },
        // Its child works in a directory of its own: the operator grants the common root.
        grants: { cwd: [root] },
      });
      const parentPid = await pidOf(h, parent);
      const spawnedEv = await until(
        async () =>
          (await eventsOf(h, parent)).find(
            (e) => e.type === 'session.tool_result' && e.payload.name === 'mcp__warren__ipc_spawn',
          ),
        30_000,
        'the parent to spawn its child',
      );
      assert.equal(spawnedEv.payload.isError, false, String(spawnedEv.payload.text));
      const { session: kidRow, pipeFd, lifecycleFd } = JSON.parse(String(spawnedEv.payload.text));
      const kid: string = kidRow.id;
      const kidPid = await pidOf(h, kid);

      // The parent closes both fds once it has the reply and the SIGCHLD that followed it: the child is reaped.
      await waitStatus(h.warren, kid, 'stopped', 60_000);
      const kidNow = await sessionOf(h.warren, kid);
      assert.equal(kidNow.endReason, 'reaped');
      assert.equal(kidNow.parentId, parent);
      assert.equal(kidNow.depth, 2);
      await until(() => gone(kidPid), 20_000, `the child's claude (pid ${kidPid}) to be gone`);
      // Its last SIGCHLD (stopped, reaped) is one more turn for the parent; then it rests.
      await until(
        async () => {
          const evs = await eventsOf(h, parent);
          const at = evs.findIndex(
            (e) => e.type === 'session.input' && String(e.payload.text).includes('(reaped'),
          );
          return at >= 0 && evs.slice(at).some((e) => e.type === 'session.status' && e.payload.to === 'idle');
        },
        30_000,
        'the parent to take the reaped SIGCHLD and go idle',
      );
      await waitStatus(h.warren, parent, 'idle', 30_000);

      // The parent's log: spawn, write, the reply and SIGCHLD as input, two closes; every tool call succeeded.
      const pe = await eventsOf(h, parent);
      const calls = pe.filter((e) => e.type === 'session.tool_call').map((e) => e.payload);
      assert.deepEqual(
        calls.map((c) => c.syscall),
        ['ipc_spawn', 'ipc_write', 'ipc_close', 'ipc_close'],
      );
      assert.deepEqual(calls[1]!.input, { fd: pipeFd, message: 'please do the task' });
      assert.deepEqual(calls[2]!.input, { fd: pipeFd });
      assert.deepEqual(calls[3]!.input, { fd: lifecycleFd });
      const results = pe.filter((e) => e.type === 'session.tool_result');
      assert.equal(results.length, 4);
      for (const r of results) assert.equal(r.payload.isError, false, String(r.payload.text));
      const inputs = pe.filter((e) => e.type === 'session.input').map((e) => String(e.payload.text));
      const replyAt = inputs.findIndex((t) => t.includes(REPLY));
      assert.ok(replyAt >= 0, 'the reply reached the parent as input');
      assert.match(
        inputs[replyAt]!,
        new RegExp(`\\[message fd=${pipeFd} stream=pipe:${kid} from=${kid} seq=\\d+\\] ${REPLY}`),
      );
      assert.ok(
        inputs.some((t) => t.includes(`[SIGCHLD] Child ${kid}`) && t.includes('Last message: reported back')),
        'the SIGCHLD after the reply reached the parent',
      );
      const closeAt = pe.findIndex(
        (e) => e.type === 'session.tool_call' && e.payload.syscall === 'ipc_close',
      );
      const sigAt = pe.findIndex(
        (e) => e.type === 'session.input' && String(e.payload.text).includes('Last message: reported back'),
      );
      assert.ok(sigAt < closeAt, 'it closed after it heard back');
      assert.ok(
        pe.some((e) => e.type === 'session.output' && e.payload.text === 'closed my fds; the child is done'),
      );
      assert.equal((await sessionOf(h.warren, parent)).status, 'idle');

      // The child's log: ready, the task as input, its reply written on fd 1, then reaped.
      const ke = await eventsOf(h, kid);
      assert.ok(ke.some((e) => e.type === 'session.output' && e.payload.text === 'child ready'));
      assert.ok(
        ke.some((e) => e.type === 'session.input' && String(e.payload.text).includes('please do the task')),
      );
      const kidCall = ke.find((e) => e.type === 'session.tool_call')!;
      assert.equal(kidCall.payload.syscall, 'ipc_write');
      assert.deepEqual(kidCall.payload.input, { fd: 1, message: REPLY });
      assert.ok(ke.some((e) => e.type === 'session.output' && e.payload.text === 'reported back'));
      const end = ke.find((e) => e.type === 'session.status' && e.payload.to === 'stopped')!;
      assert.equal(end.payload.endReason, 'reaped');

      // The pipe's transcript: the task down, the reply up.
      const pipe = await call(h.warren, 'streams_transcript', { stream: `pipe:${kid}` });
      const texts = pipe.messages
        .map((m: { from: string; text: string }) => `${m.from}: ${m.text}`)
        .reverse();
      assert.deepEqual(texts, [`${parent}: please do the task`, `${kid}: ${REPLY}`]);
      // The parent holds nothing on the child any more.
      const fds = (await call(h.warren, 'ipc_list_fds', {}, asSession(parent))).fds as Array<{
        streamName: string;
      }>;
      assert.ok(!fds.some((f) => f.streamName.endsWith(kid)));

      await call(h.warren, 'kill', { id: parent });
      await until(() => gone(parentPid), 20_000, 'the parent claude to be gone');
    });
  },
  ['sqlite'],
);
