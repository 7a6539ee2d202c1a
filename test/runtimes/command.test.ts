import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { type Running, serve } from '../../src/app/server.ts';
import { type ApiResponse, type HttpWarren, request, startHttp, withTimeout } from '../helpers/http.ts';
import { gone } from '../helpers/processes.ts';
import { call, eventsOf, forEachWarren, op, outputs, until, waitStatus } from '../helpers/warrens.ts';

/**
 * The `command` runtime with a real child: a Node script that reports its environment,
 * calls back into warren over REST with its token, echoes its stdin, reports idle, exits
 * or crashes on request, and can start a grandchild.
 */
const AGENT = `
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const mode = process.argv[2] ?? 'echo';
const say = (s) => process.stdout.write(s + '\\n');
say('env ' + JSON.stringify({
  url: process.env.WARREN_URL ?? null,
  token: process.env.WARREN_TOKEN ?? null,
  session: process.env.WARREN_SESSION_ID ?? null,
  mcp: process.env.WARREN_MCP_URL ?? null,
  prompt: process.env.WARREN_PROMPT ?? null,
  extra: process.env.AGENT_EXTRA ?? null,
  resume: process.env.WARREN_RESUME ?? null,
}));
if (mode === 'exit0') {
  say('bye');
  process.exit(0);
}
if (mode === 'crash') {
  process.stderr.write('starting up\\n');
  process.stderr.write('boom: the flux capacitor is out of flux\\n');
  process.exit(3);
}
if (mode === 'callback') {
  const res = await fetch(process.env.WARREN_URL + '/v1/syscalls/ipc_list_fds', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + process.env.WARREN_TOKEN, 'content-type': 'application/json' },
    body: '{}',
  });
  say('callback ' + JSON.stringify({ status: res.status, body: await res.json() }));
}
if (mode === 'grandchild') {
  const gc = spawn('sleep', ['1000'], { stdio: 'ignore' });
  say('pids ' + JSON.stringify({ agent: process.pid, grandchild: gc.pid }));
}
if (mode === 'stubborn') {
  process.on('SIGTERM', () => say('ignoring SIGTERM'));
  say('pids ' + JSON.stringify({ agent: process.pid }));
}
say('{"warren":"idle"}');
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  say('{"warren":"busy"}');
  say('echo ' + line);
  say('{"warren":"idle"}');
});
`;

const dir = mkdtempSync(join(tmpdir(), 'warren-cmd-'));
const agentFile = join(dir, 'agent.mjs');
writeFileSync(agentFile, AGENT);
const pids = new Set<number>();
after(() => {
  // Whatever a failing test left behind.
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  rmSync(dir, { recursive: true, force: true });
});

const agent = (mode: string, extra: Record<string, unknown> = {}) => ({
  runtime: 'command',
  command: [process.execPath, agentFile, mode],
  ...extra,
});

/** The first output line starting with `prefix`, parsed as JSON after it. */
async function outputJson<T>(h: HttpWarren, id: string, prefix: string, ms = 10_000): Promise<T> {
  const line = await until(
    async () => (await outputs(h, id)).find((t) => t.startsWith(`${prefix} `)),
    ms,
    `${id} to say "${prefix} …"`,
  );
  return JSON.parse(line.slice(prefix.length + 1)) as T;
}

function esrch(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

forEachWarren('command runtime', (t) => {
  it('gives the agent its URL, token and session id; stdout lines become session.output', async () => {
    const h = await startHttp(t);
    const r = await h.api(
      'POST',
      '/v1/sessions',
      agent('echo', { prompt: 'do the thing', env: { AGENT_EXTRA: 'yes' }, title: 'env' }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const id: string = r.json.session.id;
    assert.equal(r.json.session.runtime, 'command');
    const env = await outputJson<Record<string, string | null>>(h, id, 'env');
    assert.equal(env.url, h.url);
    assert.equal(env.mcp, `${h.url}/mcp`);
    assert.equal(env.session, id);
    assert.equal(env.prompt, 'do the thing');
    assert.equal(env.extra, 'yes');
    assert.match(env.token!, /^wst_/);
    assert.equal(h.warren.tokens.verify(env.token!)?.sessionId, id);
    assert.equal(env.token, h.tokenOf(id));
    // The control line is not output; it moved the status.
    await waitStatus(h.warren, id, 'idle');
    assert.ok(!(await outputs(h, id)).some((o) => o.includes('"warren"')));
    const s = (await h.api('GET', `/v1/sessions/${id}`)).json.session;
    assert.ok(s.lastMessage.startsWith('env '));
    await h.api('POST', `/v1/sessions/${id}/kill`, {});
  });

  it('calls back into warren over REST with its token and sees its own fds', async () => {
    const h = await startHttp(t);
    const id: string = (await h.api('POST', '/v1/sessions', agent('callback'))).json.session.id;
    const cb = await outputJson<{
      status: number;
      body: { fds: Array<{ holder: string; streamName: string }> };
    }>(h, id, 'callback');
    assert.equal(cb.status, 200, JSON.stringify(cb.body));
    assert.ok(cb.body.fds.length >= 2);
    for (const f of cb.body.fds) assert.equal(f.holder, id);
    assert.ok(cb.body.fds.some((f) => f.streamName === `stdin:${id}`));
    await waitStatus(h.warren, id, 'idle');
    await h.api('POST', `/v1/sessions/${id}/kill`, {});
  });

  it('input arrives on stdin as JSON lines, in order; idle reports a turn and wakes the parent (SIGCHLD)', async () => {
    const h = await startHttp(t);
    // A script parent that spawns the command child and listens: SIGCHLD reaches it as input.
    const parent = (
      await h.api('POST', '/v1/sessions', {
        title: 'parent',
        // An agent spawns a command only with the operator's grant, for this executable.
        grants: { runtimes: ['script', 'command'], executables: [realpathSync(process.execPath)] },
        script: {
          steps: [
            {
              spawn: {
                as: 'kid',
                runtime: 'command',
                title: 'kid',
                config: { command: [process.execPath, agentFile, 'echo'] },
              },
            },
            { listen: { say: 'parent heard: ${input.text}' } },
          ],
        },
      })
    ).json.session.id as string;
    const kid = await until(
      async () =>
        (await call(h.warren, 'ps', { all: true })).sessions.find(
          (s: { parentId: string; runtime: string }) => s.parentId === parent && s.runtime === 'command',
        ),
      10_000,
      'the command child',
    );
    const id: string = kid.id;
    await waitStatus(h.warren, id, 'idle', 20_000);
    // SIGCHLD: a signal in the log to the parent, naming the child and its status.
    const sigchld = await until(async () =>
      (await eventsOf(h, parent)).find(
        (e) => e.type === 'signal' && e.payload.signal === 'SIGCHLD' && e.payload.child === id,
      ),
    );
    assert.equal(sigchld.payload.status, 'idle');
    await until(
      async () => (await outputs(h, parent)).some((o) => o.includes('[SIGCHLD]') && o.includes(id)),
      5000,
      'the parent to hear SIGCHLD',
    );

    const turnsBefore = (await h.api('GET', `/v1/sessions/${id}`)).json.session.turns;
    const sent: number[] = [];
    for (const text of ['first line', 'second "quoted" line', 'third\nwith a newline']) {
      const r = await h.api('POST', `/v1/sessions/${id}/send`, { text });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      sent.push(r.json.seq);
    }
    const echoes = await until(
      async () => {
        const lines = (await outputs(h, id)).filter((o) => o.startsWith('echo '));
        const seen = lines.flatMap(
          (l) => (JSON.parse(l.slice(5)) as { messages: Array<{ seq: number }> }).messages,
        );
        return seen.length >= 3 ? lines : undefined;
      },
      10_000,
      'three echoed inputs',
    );
    const inputs = echoes.map(
      (l) =>
        JSON.parse(l.slice(5)) as {
          type: string;
          text: string;
          messages: Array<{
            seq: number;
            fd: number;
            stream: string;
            from: string;
            text: string;
            kind: string;
          }>;
        },
    );
    for (const i of inputs) {
      assert.equal(i.type, 'input');
      assert.equal(typeof i.text, 'string');
    }
    const messages = inputs.flatMap((i) => i.messages);
    assert.deepEqual(
      messages.map((m) => m.seq),
      sent,
    );
    assert.deepEqual(
      messages.map((m) => m.text),
      ['first line', 'second "quoted" line', 'third\nwith a newline'],
    );
    for (const m of messages) {
      assert.equal(m.stream, `stdin:${id}`);
      assert.equal(m.from, 'operator:admin');
      assert.equal(m.kind, 'message');
    }
    assert.ok(inputs[0]!.text.includes('first line'));
    await waitStatus(h.warren, id, 'idle');
    const turnsAfter = (await h.api('GET', `/v1/sessions/${id}`)).json.session.turns;
    assert.ok(turnsAfter > turnsBefore, `turns ${turnsBefore} -> ${turnsAfter}`);
    // Delivered input is acknowledged: nothing is pending on its stdin fd.
    const fds = (await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: h.tokenOf(id) })).json.fds;
    const stdin = fds.find((f: { streamName: string }) => f.streamName === `stdin:${id}`);
    await until(async () => {
      const now = (await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: h.tokenOf(id) })).json.fds;
      return now.find((f: { id: string }) => f.id === stdin.id).pending === 0;
    });
    await h.api('POST', `/v1/sessions/${parent}/kill`, {});
    await waitStatus(h.warren, id, 'stopped');
  });

  it('a reanimated agent is told it resumes (WARREN_RESUME=1), though it saved no state', async () => {
    const h = await startHttp(t);
    const r = await h.api('POST', '/v1/sessions', agent('stubborn'));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const id: string = r.json.session.id;
    const first = await outputJson<{ resume: string | null }>(h, id, 'env');
    assert.equal(first.resume, null, 'a fresh start is no resume');
    const { agent: pid } = await outputJson<{ agent: number }>(h, id, 'pids');
    pids.add(pid);
    // Killed from outside warren: its transport dropped, so it is suspended, to be reopened.
    process.kill(pid, 'SIGKILL');
    await waitStatus(h.warren, id, 'suspended');
    const opened = await h.api('POST', `/v1/sessions/${id}/open`, {});
    assert.equal(opened.status, 200, JSON.stringify(opened.json));
    assert.equal(opened.json.reanimated, true);
    const envs = await until(
      async () => {
        const lines = (await outputs(h, id)).filter((o) => o.startsWith('env '));
        return lines.length === 2 ? lines : null;
      },
      10_000,
      'the reanimated agent to report its environment',
    );
    assert.equal(JSON.parse(envs[1]!.slice(4)).resume, '1');
    const second = JSON.parse(
      (await outputs(h, id))
        .filter((o) => o.startsWith('pids '))
        .at(-1)!
        .slice(5),
    ) as { agent: number };
    pids.add(second.agent);
    await h.api('POST', `/v1/sessions/${id}/kill`, {});
  });

  it('exit 0 completes the session', async () => {
    const h = await startHttp(t);
    const id: string = (await h.api('POST', '/v1/sessions', agent('exit0'))).json.session.id;
    await waitStatus(h.warren, id, 'stopped', 20_000);
    const s = (await h.api('GET', `/v1/sessions/${id}`)).json.session;
    assert.equal(s.endReason, 'completed');
    assert.equal(s.lastMessage, 'bye');
    const end = (await eventsOf(h, id)).find(
      (e) => e.type === 'session.status' && e.payload.to === 'stopped',
    )!;
    assert.equal(end.payload.endReason, 'completed');
    assert.equal(end.payload.code, 0);
  });

  it('a non-zero exit crashes the session, with the code and the stderr tail in the log', async () => {
    const h = await startHttp(t);
    const id: string = (await h.api('POST', '/v1/sessions', agent('crash'))).json.session.id;
    await waitStatus(h.warren, id, 'stopped', 20_000);
    const s = (await h.api('GET', `/v1/sessions/${id}`)).json.session;
    assert.equal(s.endReason, 'crashed');
    const end = (await eventsOf(h, id)).find(
      (e) => e.type === 'session.status' && e.payload.to === 'stopped',
    )!;
    assert.equal(end.payload.endReason, 'crashed');
    assert.equal(end.payload.code, 3);
    assert.match(String(end.payload.error), /exited with code 3/);
    assert.match(String(end.payload.stderrTail), /boom: the flux capacitor is out of flux/);
    assert.match(String(end.payload.stderrTail), /starting up/);
  });

  it('SIGKILL (kill) takes down the whole process group: the agent and its grandchild', async () => {
    const h = await startHttp(t);
    const id: string = (await h.api('POST', '/v1/sessions', agent('grandchild'))).json.session.id;
    const p = await outputJson<{ agent: number; grandchild: number }>(h, id, 'pids');
    pids.add(p.agent);
    pids.add(p.grandchild);
    assert.ok(!gone(p.agent) && !gone(p.grandchild), 'both are running');
    await waitStatus(h.warren, id, 'idle');
    const r = await h.api('POST', `/v1/sessions/${id}/kill`, {});
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.signal, 'SIGKILL');
    await waitStatus(h.warren, id, 'stopped');
    assert.equal((await h.api('GET', `/v1/sessions/${id}`)).json.session.endReason, 'killed');
    await until(() => gone(p.agent) && gone(p.grandchild), 20_000, 'agent and grandchild to be gone');
    // The agent is our child: once reaped, it is ESRCH outright. (The grandchild was handed to
    // PID 1, which reaps when it gets to it; until then it is a zombie, which `gone` accepts.)
    await until(() => esrch(p.agent), 20_000, 'the agent to be reaped');
  });

  it('an agent that ignores SIGTERM is still disposed of (SIGKILL after a short grace)', async () => {
    const h = await startHttp(t);
    const id: string = (await h.api('POST', '/v1/sessions', agent('stubborn'))).json.session.id;
    const p = await outputJson<{ agent: number }>(h, id, 'pids');
    pids.add(p.agent);
    await waitStatus(h.warren, id, 'idle');
    await h.api('POST', `/v1/sessions/${id}/kill`, {});
    await until(() => gone(p.agent), 20_000, 'the stubborn agent to be gone');
  });

  it('a missing executable fails the spawn with runtime_unavailable naming it', async () => {
    const h = await startHttp(t);
    const before = await h.head();
    const missing = join(dir, 'no-such-agent');
    for (const command of ['warren-definitely-not-installed', missing, [missing, '--flag']]) {
      const r = await h.api('POST', '/v1/sessions', { runtime: 'command', command });
      assert.equal(r.status, 422, JSON.stringify(r.json));
      assert.equal(r.json.error.code, 'runtime_unavailable');
      const name = Array.isArray(command) ? command[0]! : command;
      assert.ok(r.json.error.message.includes(name), r.json.error.message);
      assert.equal(r.json.error.details.missing, name);
    }
    // Through the syscall table directly, the same typed error.
    await assert.rejects(call(h.warren, 'ipc_spawn', { runtime: 'command', command: 'nope-nope-nope' }, op), {
      code: 'runtime_unavailable',
    });
    // No command at all is a plain invalid input.
    const none = await h.api('POST', '/v1/sessions', { runtime: 'command' });
    assert.equal(none.status, 400);
    assert.equal(none.json.error.code, 'invalid_input');
    assert.equal(await h.head(), before, 'no session was written');
  });

  it('server shutdown (serve().stop()) leaves no agent process alive', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-cmd-serve-'));
    const loc = t.location();
    const db = t.kind === 'sqlite' ? join(dataDir, 'warren.db') : `${loc.url}?schema=${loc.schema}`;
    let running: Running | undefined;
    try {
      running = await serve(
        {
          host: '127.0.0.1',
          port: 0,
          dataDir,
          db,
          durability: 'process',
          demo: false,
          // Its agent script lives in the host's /tmp, which a sandbox does not show.
          kernel: { containment: 'none' },
        },
        { write: () => {} },
      );
      const key = readFileSync(join(dataDir, 'operator.key'), 'utf8').trim();
      const ids: string[] = [];
      for (const mode of ['grandchild', 'grandchild', 'stubborn']) {
        const r: ApiResponse = await request(running.url, 'POST', '/v1/sessions', agent(mode), { auth: key });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        ids.push(r.json.session.id);
      }
      const all: number[] = [];
      for (const id of ids) {
        const line = await until(
          async () =>
            (await running!.warren.store.log.sessionEvents(id, { limit: 1000 }))
              .map((e) => String((e.payload as { text?: string }).text ?? ''))
              .find((t) => t.startsWith('pids ')),
          10_000,
          'pids',
        );
        const p = JSON.parse(line.slice(5)) as Record<string, number>;
        for (const pid of Object.values(p)) {
          pids.add(pid);
          all.push(pid);
        }
      }
      assert.equal(all.length, 5);
      assert.ok(all.every((pid) => !gone(pid)));
      await withTimeout(running.stop(), 15_000, 'server stop');
      await until(() => all.every(gone), 20_000, 'every agent process to be gone');
    } finally {
      await running?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
