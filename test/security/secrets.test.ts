import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Runtime } from '../../src/runtimes/types.ts';
import { binEnv, type ServerProcess, startServer, WARREN_BIN } from '../helpers/server.ts';
import { asSession, call, eventsOf, forEachWarren, until, waitStatus } from '../helpers/warrens.ts';

/**
 * A planted secret used in a real scenario — an operator stores it with the CLI (stdin), a
 * spawn references it by name, a command agent reports (by hash) that it has it, and its
 * child inherits the reference — then the whole data dir (database, WAL), the log, every
 * listing, the CLI's and the server's output and every process's argv are searched for the
 * value: zero hits.
 */

const VALUE = `sk-planted-${randomBytes(18).toString('hex')}`;
const SHA = createHash('sha256').update(VALUE).digest('hex');
const node = realpathSync(process.execPath);
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_')));

function cli(args: string[], stdin?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [WARREN_BIN, ...args], { env: { ...cleanEnv, ...binEnv() } });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
    child.stdin.end(stdin ?? '');
  });
}

/** Every file under `dir`, as bytes. */
const filesUnder = (dir: string): Array<[string, Buffer]> =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => [f, readFileSync(f)]);

/** Every process's argv on this host. */
function allArgv(): string {
  let out = '';
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      out += `${readFileSync(`/proc/${pid}/cmdline`, 'latin1')}\n`;
    } catch {}
  }
  return out;
}

describe('a planted secret appears nowhere (real server, real CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-secrets-'));
  const dataDir = join(dir, 'data');
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('set from stdin, referenced, inherited, used: zero hits in the database, WAL, log, listings, output, argv', async () => {
    server = await startServer({ dataDir });
    const s = server;
    const at = ['--url', s.url, '--data-dir', dataDir];
    const outputs: string[] = [];
    const ok = async (args: string[], stdin?: string) => {
      const r = await cli([...args, ...at], stdin);
      assert.equal(r.code, 0, `warren ${args.join(' ')}: ${r.out}`);
      outputs.push(r.out);
      return r.out;
    };
    await ok(['secrets', 'set', 'planted'], `${VALUE}\n`);
    await ok(['secrets', 'set', 'unrelated'], 'another-value');
    const listed = JSON.parse(await ok(['secrets', 'list', '--json']));
    assert.deepEqual(
      listed.secrets.map((x: { name: string }) => x.name),
      ['planted', 'unrelated'],
    );

    // The child: reports, by hash, that the variable is set.
    const childJs = join(dir, 'child.mjs');
    writeFileSync(
      childJs,
      `import { createHash } from 'node:crypto';
const v = process.env.PLANTED_TOKEN;
console.log('child set=' + (v ? 'yes' : 'no') + ' sha=' + (v ? createHash('sha256').update(v).digest('hex') : '-'));
setInterval(() => {}, 1000);
`,
    );
    // The parent: the same, then spawns the child passing the reference on (and tries one it was not given).
    const parentJs = join(dir, 'parent.mjs');
    writeFileSync(
      parentJs,
      `import { createHash } from 'node:crypto';
const v = process.env.PLANTED_TOKEN;
console.log('parent set=' + (v ? 'yes' : 'no') + ' sha=' + (v ? createHash('sha256').update(v).digest('hex') : '-'));
// A careless agent echoes its key: the kernel scrubs what it reports.
console.log('leak ' + v);
const spawnChild = (secretEnv) => fetch(process.env.WARREN_URL + '/v1/sessions', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.WARREN_TOKEN, 'content-type': 'application/json' },
  body: JSON.stringify({ runtime: 'command', command: [${JSON.stringify(node)}, ${JSON.stringify(childJs)}], secretEnv }),
});
const other = await spawnChild({ PLANTED_TOKEN: 'unrelated' });
console.log('unrelated status=' + other.status + ' ' + JSON.stringify((await other.json()).error?.details ?? null));
const child = await spawnChild({ PLANTED_TOKEN: 'planted' });
console.log('child status=' + child.status + ' id=' + (await child.json()).session?.id);
setInterval(() => {}, 1000);
`,
    );
    const spawned = await s.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      runtime: 'command',
      command: [node, parentJs],
      secretEnv: { PLANTED_TOKEN: 'planted' },
      grants: { runtimes: ['command'], executables: [node] },
    });
    assert.equal(spawned.status, 200, JSON.stringify(spawned.json));
    const parent = spawned.json.session.id;

    type Evs = { events: Array<{ type: string; payload: { text?: string } }> };
    const linesOf = async (id: string) =>
      (await s.api<Evs>('GET', `/v1/sessions/${id}/events?limit=1000`)).json.events
        .filter((e) => e.type === 'session.output')
        .map((e) => e.payload.text ?? '');
    const parentLines = await until(
      async () => {
        const l = await linesOf(parent);
        return l.some((x) => x.startsWith('child status=')) ? l : null;
      },
      60_000,
      'the parent agent to report',
    );
    assert.ok(parentLines.includes(`parent set=yes sha=${SHA}`), parentLines.join('\n'));
    assert.ok(parentLines.includes('leak [secret:planted]'), parentLines.join('\n'));
    assert.ok(
      parentLines.some((l) => l.startsWith('unrelated status=403') && l.includes('"grant":"secrets"')),
      parentLines.join('\n'),
    );
    const childId = /child status=200 id=(\S+)/.exec(parentLines.join('\n'))?.[1];
    assert.ok(childId, parentLines.join('\n'));
    const childLines = await until(
      async () => {
        const l = await linesOf(childId);
        return l.length > 0 ? l : null;
      },
      60_000,
      'the child agent to report',
    );
    assert.deepEqual(childLines, [`child set=yes sha=${SHA}`]);

    // The control: the search finds the value where it belongs, in the two agents' environments.
    const environs = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`).includes(VALUE);
        } catch {
          return false;
        }
      });
    // (Each agent is two processes: itself and the lifeline watcher it was forked beside.)
    assert.ok(environs.length >= 2, 'the parent and the child agent hold the value in their environment');

    // Everything a user could look at, through every surface, while the agents run.
    const seen: string[] = [...outputs, allArgv()];
    for (const path of [
      '/v1/events?limit=10000',
      '/v1/sessions?all=true',
      `/v1/sessions/${parent}`,
      `/v1/sessions/${childId}`,
      `/v1/sessions/${parent}/events?limit=10000`,
      `/v1/sessions/${childId}/events?limit=10000`,
      '/v1/secrets',
      `/v1/streams/pipe:${parent}/transcript`,
    ]) {
      const r = await s.api('GET', path);
      assert.equal(r.status, 200, path);
      seen.push(JSON.stringify(r.json));
    }
    seen.push(
      await ok(['ps', '--all']),
      await ok(['events', '--limit', '1000']),
      await ok(['session', 'show', parent]),
    );
    const hits = (label: string, text: string | Buffer) => (text.includes(VALUE) ? [label] : []);
    const found = [
      ...seen.flatMap((t, i) => hits(`surface #${i}`, t)),
      ...filesUnder(dataDir).flatMap(([f, b]) => hits(f, b)),
      ...hits('server output', s.output()),
    ];
    assert.deepEqual(found, []);

    // And after a clean stop, whatever the database files hold now.
    await s.stop();
    const after = [
      ...filesUnder(dataDir).flatMap(([f, b]) => hits(f, b)),
      ...hits('server output', s.output()),
    ];
    assert.deepEqual(after, []);
  });
});

/** A runtime whose agent reports one tool call with credentials in its input, as claude-code's would. */
const leakyRuntime = (input: Record<string, unknown>): Runtime => ({
  name: 'leaky',
  validate() {},
  async start(ctx) {
    await ctx.sink.event('tool_call', { id: 't1', name: 'ipc_spawn', input });
    await ctx.sink.event('tool_call', { id: 't2', name: 'ipc_spawn', arguments: JSON.stringify(input) });
    await ctx.sink.idle();
    return { ready: true, deliver() {}, async stop() {} };
  },
});

forEachWarren('inline credentials in tool calls', (t) => {
  it('a spawn env passed inline is redacted in the parent tool-call event; secret names are kept', async () => {
    const INLINE = `sk-inline-${randomBytes(12).toString('hex')}`;
    const input = {
      runtime: 'claude-code',
      env: { ANTHROPIC_API_KEY: INLINE, GITHUB_TOKEN: INLINE, DB_PASSWORD: INLINE, LANG: 'C.UTF-8' },
      secretEnv: { OPENAI_API_KEY: 'openai' },
    };
    const w = await t.open({ runtimes: [leakyRuntime(input)] });
    const { session } = await call(w, 'ipc_spawn', { runtime: 'leaky' });
    await waitStatus(w, session.id, 'idle');
    const calls = (await eventsOf(w, session.id)).filter((e) => e.type === 'session.tool_call');
    assert.equal(calls.length, 2);
    const text = JSON.stringify(calls);
    assert.ok(!text.includes(INLINE), text);
    const first = calls[0]!.payload.input as {
      env: Record<string, string>;
      secretEnv: Record<string, string>;
    };
    assert.deepEqual(first.env, {
      ANTHROPIC_API_KEY: '[redacted]',
      GITHUB_TOKEN: '[redacted]',
      DB_PASSWORD: '[redacted]',
      LANG: 'C.UTF-8',
    });
    assert.deepEqual(first.secretEnv, { OPENAI_API_KEY: 'openai' });
  });

  it('a session cannot set, list or delete secrets; an unknown secret name fails the spawn by name', async () => {
    const w = await t.open();
    const { session } = await call(w, 'ipc_spawn', { script: { steps: [{ listen: {} }] } });
    const me = asSession(session.id);
    for (const [name, input] of [
      ['secrets_set', { name: 'x', value: 'y' }],
      ['secrets_list', {}],
      ['secrets_delete', { name: 'x' }],
    ] as const) {
      await assert.rejects(call(w, name, input, me), { code: 'forbidden' });
    }
    await assert.rejects(call(w, 'ipc_spawn', { script: { steps: [] }, secretEnv: { K: 'nope' } }), {
      code: 'not_found',
      message: /secret "nope"/,
    });
  });
});
