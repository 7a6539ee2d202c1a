/**
 * The README's promise, end to end: a real `warren serve --demo` process, and the real CLI
 * (`bin/warren.js`) run as child processes against it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { binEnv, type ServerProcess, startServer, WARREN_BIN } from '../helpers/server.ts';
import { until } from '../helpers/warrens.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// The CLI must not pick up a developer's own settings.
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_') && k !== 'COLUMNS'),
);

function runCli(args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [WARREN_BIN, ...args],
      { env: { ...cleanEnv, ...binEnv(), COLUMNS: '400' }, cwd: opts.cwd, timeout: opts.timeoutMs ?? 20_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}

/** Terminal escapes as an attacker writes them: clear the screen, retitle the window. */
const ATTACK = 'pwned\u001b[2J\u001b]0;owned\u0007';
/** Any C0 except newline, DEL or C1, raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what the test looks for.
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** A table's header cells: words separated by two or more spaces. */
const headerOf = (out: string) =>
  out
    .split('\n')[0]!
    .trim()
    .split(/\s{2,}/);

describe('the CLI against a live demo server (e2e)', () => {
  let dataDir: string;
  let server: ServerProcess;
  let lead: string;
  let bob: string;
  const warren = (...args: string[]) => runCli([...args, '--url', server.url, '--data-dir', dataDir]);
  const ok = async (...args: string[]) => {
    const r = await warren(...args);
    assert.equal(r.code, 0, `warren ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const json = async <T>(...args: string[]) => JSON.parse(await ok(...args, '--json')) as T;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'warren-e2e-'));
    server = await startServer({ dataDir, args: ['--demo'] });
    await until(() => server.output().includes('The demo is running'), 20_000, 'the demo to be running');
    lead = /demo: spawned lead (\S+)/.exec(server.output())![1]!;
    const { sessions } = await json<{ sessions: Array<{ id: string; title: string; status: string }> }>('ps');
    bob = sessions.find((s) => s.title === 'bob')!.id;
    assert.ok(bob, 'the demo spawned bob');
  });

  after(async () => {
    await server?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('ps: the demo sessions in a table with the reference columns; --json parses', async () => {
    const [out, data] = await Promise.all([
      ok('ps'),
      json<{ sessions: Array<{ id: string; title: string; depth: number; status: string }> }>('ps'),
    ]);
    assert.deepEqual(headerOf(out), [
      'ID',
      'Title',
      'Status',
      'Reason/End',
      'Parent',
      'Depth',
      'Runtime',
      'Last message',
    ]);
    const row = (id: string) => out.split('\n').find((l) => l.startsWith(id));
    assert.match(row(lead) ?? '', /\blead\b.*\bidle\b.*\binit\b\s+1\s+script/);
    assert.match(row(bob) ?? '', new RegExp(`\\bbob\\b.*\\bidle\\b.*${lead}\\s+2\\s+script`));
    assert.match(row('init') ?? '', /init\s+running/);
    // alice was released by the lead: reaped, so only ps --all shows her.
    assert.ok(!out.includes('alice'));
    const titles = data.sessions.map((s) => s.title).sort();
    assert.deepEqual(titles, ['bob', 'init', 'lead']);
    const all = await json<{ sessions: Array<{ title: string; status: string; endReason: string }> }>(
      'ps',
      '--all',
    );
    const alice = all.sessions.find((s) => s.title === 'alice')!;
    assert.equal(alice.status, 'stopped');
    assert.equal(alice.endReason, 'reaped');
  });

  it('events: Seq/ID/Type/Timestamp/Payload, most recent first; --type filters; --json parses', async () => {
    const [out, data, spawned] = await Promise.all([
      ok('events', '--limit', '20'),
      json<{ events: Array<{ seq: number; type: string }> }>('events'),
      json<{ events: Array<{ type: string }> }>('events', '--type', 'session.spawned'),
    ]);
    assert.deepEqual(headerOf(out), ['Seq', 'ID', 'Type', 'Timestamp', 'Payload']);
    const rows = out.trim().split('\n').slice(1);
    assert.equal(rows.length, 20);
    const seqs = rows.map((r) => Number(r.trim().split(/\s+/)[0]));
    assert.ok(
      seqs.every((s, i) => i === 0 || seqs[i - 1]! > s),
      'most recent first',
    );
    assert.match(rows[0]!, /^\d+\s+[0-9A-Z]{26}\s+\S+\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\s+\{/);
    // Default limit 100 (the seq is gap-free from 1, all in one zone).
    assert.equal(data.events.length, Math.min(100, data.events[0]!.seq));
    assert.equal(spawned.events.length, 3, 'lead, alice, bob');
    for (const e of spawned.events) assert.equal(e.type, 'session.spawned');

    // --before and --after take the ID column as well as the seq, and mean the same place.
    const [seq5, id5] = rows[5]!.trim().split(/\s+/);
    const [bySeq, byId, afterId] = await Promise.all([
      json<{ events: Array<{ seq: number }> }>('events', '--before', seq5!, '--limit', '3'),
      json<{ events: Array<{ seq: number }> }>('events', '--before', id5!, '--limit', '3'),
      json<{ events: Array<{ seq: number }> }>('events', '--after', id5!.toLowerCase(), '--limit', '2'),
    ]);
    assert.deepEqual(
      byId.events.map((e) => e.seq),
      bySeq.events.map((e) => e.seq),
    );
    assert.deepEqual(
      byId.events.map((e) => e.seq),
      [1, 2, 3].map((d) => Number(seq5) - d),
    );
    assert.deepEqual(
      afterId.events.map((e) => e.seq),
      [1, 2].map((d) => Number(seq5) + d),
    );
    const unknown = await warren('events', '--before', '01ARZ3NDEKTSV4RRFFQ69G5FAV');
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /not_found.*event "01ARZ3NDEKTSV4RRFFQ69G5FAV" does not exist/);
  });

  it('streams list: the demo rooms, one indented row per subscriber', async () => {
    const [out, data] = await Promise.all([
      ok('streams', 'list'),
      json<{ streams: Array<{ name: string; subscribers: Array<{ fd: number; holder: string }> }> }>(
        'streams',
        'list',
      ),
    ]);
    assert.deepEqual(headerOf(out), ['ID', 'Name', 'Subscribers', 'Buffer Depth']);
    const names = data.streams.map((s) => s.name);
    assert.ok(
      names.some((n) => n.startsWith('lobby-')),
      names.join(','),
    );
    assert.ok(names.includes(`standup-${lead}`), names.join(','));
    const lines = out.trimEnd().split('\n').slice(1);
    for (const s of data.streams) {
      const at = lines.findIndex((l) => l.startsWith('str_') && l.includes(` ${s.name} `));
      assert.ok(at >= 0, `a row for ${s.name}`);
      assert.match(lines[at]!, new RegExp(`\\s${s.subscribers.length}\\s+\\d+$`));
      const subs = lines.slice(at + 1, at + 1 + s.subscribers.length);
      for (const [i, sub] of subs.entries()) {
        assert.match(sub, /^\s+fd \d+\s+\S+\s+(r|w|rw)\/(sync|async|detach)/, sub);
        assert.ok(sub.includes(s.subscribers[i]!.holder), `${sub} names ${s.subscribers[i]!.holder}`);
      }
    }
    // --internal adds the plumbing, with the spawned ends marked.
    const internal = await ok('streams', 'list', '--internal');
    assert.ok(internal.includes(`lifecycle:${bob}`));
    assert.ok(internal.includes(`pipe:${bob}`));
    assert.ok(internal.includes('(spawned)'));
  });

  it("session events <lead>: the lead's log with Seq/Type/Timestamp/Content; --from, --limit, --json", async () => {
    const [out, data] = await Promise.all([
      ok('session', 'events', lead),
      json<{ events: Array<{ seq: number; type: string; session_id: string; payload: { text?: string } }> }>(
        'session',
        'events',
        lead,
      ),
    ]);
    assert.deepEqual(headerOf(out), ['Seq', 'Type', 'Timestamp', 'Content']);
    assert.ok(out.includes('session.spawned'));
    assert.ok(out.includes('Planning: two workers, one room.'), 'the lead said so');
    const said = data.events.filter((e) => e.type === 'session.output').map((e) => e.payload.text);
    assert.ok(said.includes('Heard back: alice: the API has three endpoints / bob: twelve tests, all green'));
    const seqs = data.events.map((e) => e.seq);
    assert.ok(
      seqs.every((s, i) => i === 0 || seqs[i - 1]! < s),
      'oldest first',
    );
    for (const e of data.events) assert.equal(e.session_id, lead);
    const from = seqs[3]!;
    const page = await json<{ events: Array<{ seq: number }> }>(
      'session',
      'events',
      lead,
      '--from',
      String(from),
      '--limit',
      '2',
    );
    assert.deepEqual(
      page.events.map((e) => e.seq),
      seqs.filter((s) => s > from).slice(0, 2),
    );
  });

  it('streams create / attach / attachments / detach (twice) / close', async () => {
    const created = await ok('streams', 'create', 'e2e-room', '--self-echo');
    assert.match(created, /^created e2e-room \(str_\w+\); operator fd \d+/);
    const attached = await ok('streams', 'attach', bob, 'e2e-room', '--perm', 'r', '--mode', 'detach');
    assert.match(attached, new RegExp(`^attached ${bob} to e2e-room as fd \\d+`));
    // Attaching again is not an error: it says so.
    assert.match(await ok('streams', 'attach', bob, 'e2e-room'), /^already attached:/);

    const [table, fds] = await Promise.all([
      ok('streams', 'attachments', bob),
      json<{ fds: Array<{ streamName: string; permission: string; deliveryMode: string }> }>(
        'streams',
        'attachments',
        bob,
      ),
    ]);
    assert.ok(table.includes('e2e-room'));
    const room = fds.fds.find((f) => f.streamName === 'e2e-room')!;
    assert.equal(room.permission, 'r');
    assert.equal(room.deliveryMode, 'detach');
    // Reserved plumbing is not among the attachments.
    assert.ok(!fds.fds.some((f) => /^(pipe|lifecycle|stdin):/.test(f.streamName)));

    assert.match(
      await ok('streams', 'detach', bob, 'e2e-room'),
      new RegExp(`^detached ${bob} from e2e-room`),
    );
    assert.match(await ok('streams', 'detach', bob, 'e2e-room'), /was not attached to e2e-room/);
    const afterDetach = await json<{ fds: Array<{ streamName: string }> }>('streams', 'attachments', bob);
    assert.ok(!afterDetach.fds.some((f) => f.streamName === 'e2e-room'));

    const closed = await ok('streams', 'close', 'e2e-room');
    assert.match(closed, /^closed e2e-room \(str_\w+\); evicted operator:admin/);
    const { streams } = await json<{ streams: Array<{ name: string }> }>('streams', 'list');
    assert.ok(!streams.some((s) => s.name === 'e2e-room'));
    // bob lives on: he had other fds.
    const { session } = await json<{ session: { status: string } }>('session', 'show', bob);
    assert.notEqual(session.status, 'stopped');
  });

  it('send: text reaches the session as input', async () => {
    const out = await ok('send', bob, 'hello from the terminal');
    assert.match(out, /^sent \(seq \d+\)/);
    await until(
      async () =>
        (
          await json<{ events: Array<{ type: string; payload: { text?: string } }> }>(
            'session',
            'events',
            bob,
          )
        ).events.some(
          (e) => e.type === 'session.output' && e.payload.text?.includes('hello from the terminal'),
        ),
      10_000,
      'bob to hear it',
    );
  });

  it('kill --graceful: an agent that takes the SIGTERM and ends its turn is terminated at once', async () => {
    const spawned = await ok(
      'spawn',
      'sit tight',
      '--title',
      'e2e-victim',
      '--script',
      '{"steps":[{"listen":{}}]}',
    );
    const id = /spawned (ses_\w+)/.exec(spawned)![1]!;
    const term = await ok('kill', id, '--graceful');
    assert.match(term, new RegExp(`^SIGTERM sent to ${id}; SIGKILL at \\S+Z if it has not stopped`));
    const show = () => json<{ session: { status: string; endReason: string } }>('session', 'show', id);
    await until(async () => (await show()).session.status === 'stopped', 20_000, 'the terminated agent');
    assert.equal((await show()).session.endReason, 'terminated', 'not after the 60 s grace, and not killed');
    const signals = await json<{ events: Array<{ type: string; payload: { signal?: string } }> }>(
      'session',
      'events',
      id,
    );
    assert.ok(signals.events.some((e) => e.type === 'signal' && e.payload.signal === 'SIGTERM'));
    assert.ok(!signals.events.some((e) => e.type === 'signal' && e.payload.signal === 'SIGKILL'));
  });

  it('kill: SIGKILL at once', async () => {
    const spawned = await ok('spawn', '--title', 'e2e-victim-2', '--script', '{"steps":[{"listen":{}}]}');
    const id = /spawned (ses_\w+)/.exec(spawned)![1]!;
    assert.match(await ok('kill', id), new RegExp(`^SIGKILL sent to ${id}`));
    const { session } = await json<{ session: { status: string; endReason: string } }>('session', 'show', id);
    assert.equal(session.status, 'stopped');
    assert.equal(session.endReason, 'killed');
  });

  it('--help exits 0 for the top level and a subcommand; an unknown command exits 2', async () => {
    const [top, sub, group, unknown, unknownSub] = await Promise.all([
      runCli(['--help']),
      runCli(['streams', 'attach', '--help']),
      runCli(['streams', '--help']),
      runCli(['frobnicate']),
      runCli(['streams', 'frobnicate']),
    ]);
    assert.equal(top.code, 0);
    assert.match(top.stdout, /Usage: warren <command>/);
    assert.ok(top.stdout.includes('streams attach'));
    assert.equal(sub.code, 0);
    assert.ok(sub.stdout.includes('--perm'), sub.stdout);
    assert.equal(group.code, 0);
    assert.ok(group.stdout.includes('streams close'));
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'frobnicate'/);
    assert.equal(unknownSub.code, 2);
    assert.match(unknownSub.stderr, /unknown command 'streams frobnicate'/);
  });

  it('a wrong key exits 1 with error [unauthenticated]; no server exits 1 saying so', async () => {
    const [wrong, missing, down] = await Promise.all([
      runCli(['ps', '--url', server.url, '--key', 'wk_not-the-key']),
      runCli(['ps', '--url', server.url, '--data-dir', join(dataDir, 'nowhere')]),
      runCli(['ps', '--url', 'http://127.0.0.1:9', '--key', 'wk_x']),
    ]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^error \[unauthenticated\]: invalid API key/);
    assert.equal(wrong.stdout, '');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no API key/);
    assert.equal(down.code, 1);
    assert.match(down.stderr, /cannot reach warren at http:\/\/127\.0\.0\.1:9/);
  });

  it("a value only the schema refuses: exit 2, the server's issue named by its flag", async () => {
    const [limit, since] = await Promise.all([
      warren('session', 'events', lead, '--limit', '0'),
      warren('events', '--since', 'yesterday-ish'),
    ]);
    assert.equal(limit.code, 2, limit.stderr);
    assert.match(limit.stderr, /^warren: --limit: /);
    assert.match(limit.stderr, /Run 'warren session events --help'/);
    assert.equal(since.code, 2, since.stderr);
    assert.match(since.stderr, /--since: not an ISO 8601 time: yesterday-ish/);
  });

  it('names and titles with control characters are refused at validation, on every path', async () => {
    const name = `room\u001b[2J\u001b]0;pwned\u0007`;
    for (const [path, body, field] of [
      ['/v1/streams', { name }, 'name'],
      ['/v1/syscalls/ipc_create_stream', { name }, 'name'],
      ['/v1/sessions', { prompt: 'x', title: `t${ATTACK}` }, 'title'],
    ] as const) {
      const res = await server.api<{
        error: { code: string; message: string; details: { issues: { path: string }[] } };
      }>('POST', path, body);
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.code, 'invalid_input');
      assert.match(res.json.error.message, /must not contain control characters/);
      assert.deepEqual(
        res.json.error.details.issues.map((i) => i.path),
        [field],
      );
    }
    const cliCreate = await warren('streams', 'create', name);
    assert.equal(cliCreate.code, 2);
    assert.match(cliCreate.stderr, /<name>: a stream name must not contain control characters/);
    assert.doesNotMatch(cliCreate.stderr, RAW_CONTROL);
    const { streams } = await json<{ streams: { name: string }[] }>('streams', 'list');
    assert.ok(!streams.some((s) => s.name.startsWith('room\u001b')));
  });

  it('agent output with terminal escapes shows escaped in ps, events and session events', async () => {
    const script = JSON.stringify({ steps: [{ say: ATTACK }, { listen: {} }] });
    const id = /spawned (ses_\w+)/.exec(
      await ok('spawn', 'go', '--title', 'escapist', '--script', script),
    )![1]!;
    await until(
      async () => (await ok('session', 'events', id)).includes('pwned'),
      10_000,
      'the agent to speak',
    );
    const [ps, events, sessionEvents] = await Promise.all([
      ok('ps'),
      ok('events', '--limit', '50'),
      ok('session', 'events', id),
    ]);
    for (const out of [ps, events, sessionEvents]) assert.doesNotMatch(out, RAW_CONTROL);
    const row = ps.split('\n').find((l) => l.startsWith(id));
    assert.ok(row?.includes('pwned\\x1b[2J\\x1b]0;owned\\x07'), ps);
    assert.ok(sessionEvents.includes('pwned\\x1b[2J'), sessionEvents);
    assert.ok(events.includes('pwned\\u001b[2J'), events);
    await ok('kill', id);
  });
});
