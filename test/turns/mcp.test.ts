/**
 * The coordinator bridge end to end: a real `warren serve`, the real `warren mcp-serve
 * coordinator` adapter on stdio, and the official MCP SDK client as the coordinator.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { binEnv, type ServerProcess, startServer, WARREN_BIN } from '../helpers/server.ts';

// biome-ignore lint/suspicious/noExplicitAny: tool results are checked field by field
type Any = any;

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_') && !k.startsWith('SKC_')),
) as Record<string, string>;

interface Bridge {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<Any>;
  /** The error `{ code, message }` of a call that must fail. */
  fails(name: string, args?: Record<string, unknown>): Promise<{ code: string; message: string }>;
  close(): Promise<void>;
}

async function connect(server: ServerProcess, env: Record<string, string>): Promise<Bridge> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [WARREN_BIN, 'mcp-serve', 'coordinator', '--url', server.url, '--key', server.key],
    env: { ...cleanEnv, ...(binEnv() as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'test-coordinator', version: '1.0.0' });
  await client.connect(transport);
  const raw = (name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: 40_000 }) as Promise<Any>;
  return {
    client,
    async call(name, args) {
      const r = await raw(name, args);
      if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
      return r.structuredContent;
    },
    async fails(name, args) {
      const r = await raw(name, args);
      assert.equal(r.isError, true, `${name} should have failed: ${JSON.stringify(r.structuredContent)}`);
      return JSON.parse(r.content[0].text).error;
    },
    close: () => client.close(),
  };
}

const T = (n: string) => `skc_coordinator_${n}`;

describe('coordinator bridge over stdio MCP', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'warren-turns-mcp-')));
  const work = join(root, 'work');
  const outside = join(root, '..', `${root.split('/').pop()}-outside`);
  mkdirSync(work);
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(work, 'out.md'), '# result\nall good\n');
  writeFileSync(join(work, 'big.txt'), 'x'.repeat(5000));
  writeFileSync(join(work, 'blob.bin'), Buffer.from([1, 2, 0, 3]));
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  symlinkSync(join(outside, 'secret.txt'), join(work, 'escape.txt'));
  const dataDir = join(root, 'data');
  const settings = JSON.stringify({
    turns: { mutations: ['sessions', 'questions', 'reports'], workdirRoots: [root] },
  });
  const open: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    await Promise.allSettled(open.splice(0).map((o) => o.close()));
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  const serve = async () => {
    const s = await startServer({ dataDir, args: ['--plugin-settings', settings] });
    open.push({ close: () => s.stop() });
    return s;
  };
  const full = {
    SKC_COORDINATOR_MCP_WORKDIR_ROOTS: root,
    SKC_COORDINATOR_MCP_MUTATIONS: 'sessions,questions,reports',
  };

  let shared: ServerProcess | undefined;
  it('start, send, await, question, answer, report, artifacts, and watch resumed after a restart', async () => {
    let server = await serve();
    let b = await connect(server, { ...full, SKC_COORDINATOR_MCP_ARTIFACT_BYTE_CAP: '1000' });
    open.push(b);
    const names = (await b.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes(T('send_prompt')) && names.includes(T('watch_events')));
    // A worker: answers each prompt, asking one question on the way for the second.
    const spawned = await server.api<Any>('POST', '/v1/syscalls/ipc_spawn', {
      runtime: 'script',
      cwd: work,
      // Its agent asks a question: the turns group's agent tools.
      toolGroups: ['turns'],
      config: {
        script: {
          steps: [
            { wait: {} },
            { say: 'first done' },
            { wait: {} },
            { call: { syscall: 'bridge_ask_question', input: { text: 'ship it?', options: ['yes', 'no'] } } },
            { wait: { as: 'a' } },
            { say: 'answered ${a.text}' },
            { listen: { say: 'done: ${input.text}' } },
          ],
        },
      },
    });
    const sid = spawned.json.session.id;
    const reg = await b.call(T('register_session'), { session_id: sid, allow_mutation: true });
    assert.equal(reg.session.cwd, work);
    const listed = await b.call(T('list_sessions'));
    assert.deepEqual(
      listed.sessions.map((s: Any) => s.session_id),
      [sid],
    );

    const t1 = (await b.call(T('send_prompt'), { session_id: sid, prompt: 'go', allow_mutation: true })).turn;
    const r1 = await b.call(T('await_turn'), { turn_id: t1.turn_id, timeout_ms: 20_000 });
    assert.deepEqual(
      [r1.timed_out, r1.turn.status, r1.turn.final_response.text],
      [false, 'completed', 'first done'],
    );

    const snap = await b.call(T('read_coordination_status'));
    const t2 = (await b.call(T('send_prompt'), { session_id: sid, prompt: 'ship?', allow_mutation: true }))
      .turn;
    const w1 = await b.call(T('watch_events'), {
      after_seq: snap.latest_event_seq,
      event_types: ['question.asked'],
      timeout_ms: 20_000,
    });
    assert.equal(w1.events.length, 1);
    assert.deepEqual(w1.transport, { mcp: 'long_poll', push_subscriptions: false });
    const q = (await b.call(T('list_questions'))).questions[0];
    assert.equal(q.turn_id, t2.turn_id);
    await b.call(T('submit_question_answer'), {
      question_id: q.question_id,
      answer: 'yes',
      allow_mutation: true,
    });
    const r2 = await b.call(T('await_turn'), { turn_id: t2.turn_id, timeout_ms: 20_000 });
    assert.match(r2.turn.final_response.text, /^answered .*yes$/);
    const rep = await b.call(T('report_status'), {
      session_id: sid,
      status: 'in_progress',
      summary: 'reviewing out.md',
      evidence: ['out.md'],
      allow_mutation: true,
    });
    assert.equal(rep.report.status, 'in_progress');

    // Artifacts: canonical, capped, binary detected, escapes refused.
    const art = await b.call(T('read_artifact'), { session_id: sid, path: 'out.md' });
    assert.deepEqual([art.content, art.binary, art.truncated], ['# result\nall good\n', false, false]);
    const big = await b.call(T('read_artifact'), { session_id: sid, path: 'big.txt' });
    assert.deepEqual([big.content.length, big.truncated, big.bytes], [1000, true, 5000]);
    const bin = await b.call(T('read_artifact'), { session_id: sid, path: 'blob.bin' });
    assert.deepEqual([bin.binary, bin.content], [true, null]);
    assert.equal(
      (await b.fails(T('read_artifact'), { session_id: sid, path: 'escape.txt' })).code,
      'forbidden',
    );
    assert.equal(
      (await b.fails(T('read_artifact'), { session_id: sid, path: '../work/out.md' })).code,
      'forbidden',
    );
    assert.equal(
      (await b.fails(T('read_artifact'), { session_id: sid, path: '/etc/passwd' })).code,
      'forbidden',
    );
    const ls = await b.call(T('list_artifacts'), { session_id: sid });
    assert.ok(ls.entries.some((e: Any) => e.path === 'escape.txt' && e.type === 'symlink'));

    // Resume: the cursor survives a restart of the server and of the adapter.
    const cursor = (await b.call(T('watch_events'), { after_seq: 0, timeout_ms: 0, limit: 100 })).latest_seq;
    await b.close();
    await server.stop();
    server = await serve();
    b = await connect(server, full);
    open.push(b);
    const quiet = await b.call(T('watch_events'), {
      after_seq: (await b.call(T('read_coordination_status'))).latest_event_seq,
      timeout_ms: 300,
    });
    assert.deepEqual([quiet.timed_out, quiet.events.length], [true, 0]);
    const waiting = b.call(T('watch_events'), {
      after_seq: cursor + 0,
      event_types: ['turn.*'],
      session_id: sid,
      timeout_ms: 20_000,
    });
    const t3 = (await b.call(T('send_prompt'), { session_id: sid, prompt: 'again', allow_mutation: true }))
      .turn;
    const woke = await waiting;
    assert.ok(woke.events.some((e: Any) => e.turn_id === t3.turn_id));
    assert.ok(woke.latest_seq > cursor);
    const r3 = await b.call(T('await_turn'), { turn_id: t3.turn_id, timeout_ms: 20_000 });
    assert.match(r3.turn.final_response.text, /^done: .*again$/);
    shared = server;
  });

  it('fails closed: no opt-in, no per-call consent, outside the allowlist, another namespace', async () => {
    const server = shared ?? (await serve());
    const ro = await connect(server, { SKC_COORDINATOR_MCP_WORKDIR_ROOTS: root });
    open.push(ro);
    const e1 = await ro.fails(T('send_prompt'), {
      session_id: 'ses_01abcdefghijklmnop',
      prompt: 'x',
      allow_mutation: true,
    });
    assert.match(e1.message, /not enabled/);
    const rw = await connect(server, full);
    open.push(rw);
    const e2 = await rw.fails(T('send_prompt'), { session_id: 'ses_01abcdefghijklmnop', prompt: 'x' });
    assert.match(e2.message, /allow_mutation: true/);
    const e3 = await rw.fails(T('start_session'), { kind: 'command', cwd: outside, allow_mutation: true });
    assert.match(e3.message, /outside the allowed roots/);
    const noRoots = await connect(server, { SKC_COORDINATOR_MCP_MUTATIONS: 'sessions' });
    open.push(noRoots);
    const e4 = await noRoots.fails(T('start_session'), { kind: 'command', cwd: work, allow_mutation: true });
    assert.match(e4.message, /no working-directory roots/);
    const e5 = await rw.fails(T('read_turn'), { turn_id: '../../etc/passwd' });
    assert.equal(e5.code, 'invalid_input');
    // Another namespace sees none of the default namespace's sessions.
    const other = await connect(server, { ...full, SKC_COORDINATOR_MCP_PROFILE: 'team-b' });
    open.push(other);
    const mine = await rw.call(T('list_sessions'));
    assert.ok(mine.sessions.length >= 1);
    assert.deepEqual((await other.call(T('list_sessions'))).sessions, []);
    const e6 = await other.fails(T('read_status'), { session_id: mine.sessions[0].session_id });
    assert.equal(e6.code, 'not_found');
  });
});
