/**
 * `warren serve` with a config file, as a real server child process: a bad file stops it
 * before anything starts, and a file that opens the tiers lets a running server build a
 * tree four deep (orchestrator → leads → workers → helpers) through the REST API.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { binEnv, type ServerProcess, startServer, WARREN_BIN } from '../helpers/server.ts';
import { until } from '../helpers/warrens.ts';

// The server must not pick up a developer's own settings.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_')));

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDirWith(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'warren-serve-config-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', name), text);
  return join(dir, 'data');
}

function serveOnce(dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [WARREN_BIN, 'serve', '--port', '0', '--data-dir', dataDir],
      { env: { ...cleanEnv, ...binEnv() }, timeout: 20_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}

interface Session {
  id: string;
  title: string | null;
  depth: number;
  parentId: string | null;
  status: string;
  endReason: string | null;
  endDetail: string | null;
  lastMessage: string | null;
}

const idle = { steps: [{ listen: {} }] };
/** At depth 4 of 4: the spawn is refused, and the script says so as it ends. */
const helper = { steps: [{ say: 'helper up' }, { spawn: { title: 'too-deep', script: idle } }] };
const worker = (title: string, helps: boolean) => ({
  title,
  script: {
    steps: [...(helps ? [{ spawn: { title: `${title}-helper`, script: helper } }] : []), { listen: {} }],
  },
});
const lead = (name: string) => ({
  title: `lead-${name}`,
  script: {
    steps: [
      { spawn: worker(`worker-${name}1`, name === 'a') },
      { spawn: worker(`worker-${name}2`, false) },
      { listen: {} },
    ],
  },
});
const orchestrator = {
  title: 'orchestrator',
  script: { steps: [{ spawn: lead('a') }, { spawn: lead('b') }, { listen: {} }] },
};

describe('warren serve with a config file (real server process)', () => {
  let server: ServerProcess | undefined;
  after(() => server?.stop());

  it('a bad file: exit 2 before listening, naming the file and the key', async () => {
    const dataDir = dataDirWith('warren.config.yaml', 'limits:\n  maxDepth: -4\n');
    const r = await serveOnce(dataDir);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /warren\.config\.yaml: limits\.maxDepth: Too small: expected number to be >0/);
    assert.ok(r.stderr.includes(join(dataDir, 'warren.config.yaml')), r.stderr);
    assert.ok(!r.stdout.includes('listening'), r.stdout);
  });

  it('opened tiers: a depth-2 lead spawns workers, a depth-3 worker a helper; depth 5 is refused', async () => {
    const dataDir = dataDirWith(
      'warren.config.yaml',
      [
        'limits:',
        '  maxDepth: 4',
        'tiers:',
        '  agent: [ipc_spawn, ipc_write, ipc_read, ipc_wait, ipc_close, ipc_list_fds, ps]',
        '  worker: [ipc_spawn, ipc_write, ipc_read, ipc_wait, ipc_close, ipc_list_fds]',
      ].join('\n'),
    );
    server = await startServer({ dataDir, env: { ...cleanEnv } });
    assert.ok(server.output().includes(`config: ${join(dataDir, 'warren.config.yaml')}`), server.output());
    const spawned = await server.api<{ session: Session }>('POST', '/v1/sessions', orchestrator);
    assert.equal(spawned.status, 200, JSON.stringify(spawned.json));

    const all = async () =>
      (await server!.api<{ sessions: Session[] }>('GET', '/v1/sessions?all=true')).json.sessions.filter(
        (s) => s.depth > 0,
      );
    const tree = await until(
      async () => {
        const s = await all();
        const deepest = s.find((x) => x.title === 'worker-a1-helper');
        return s.length === 8 && deepest?.status === 'stopped' ? s : undefined;
      },
      20_000,
      'the tree of 8 sessions with the helper ended',
    );
    const byTitle = new Map(tree.map((s) => [s.title, s]));
    const depthOf = (t: string) => byTitle.get(t)?.depth;
    assert.equal(depthOf('orchestrator'), 1);
    assert.equal(depthOf('lead-a'), 2);
    assert.equal(depthOf('lead-b'), 2);
    for (const w of ['worker-a1', 'worker-a2', 'worker-b1', 'worker-b2']) {
      assert.equal(depthOf(w), 3, w);
      assert.notEqual(byTitle.get(w)!.status, 'stopped', `${w} is alive`);
    }
    assert.equal(depthOf('worker-a1-helper'), 4);
    assert.equal(byTitle.get('worker-a1-helper')!.parentId, byTitle.get('worker-a1')!.id);
    assert.ok(!byTitle.has('too-deep'), 'nothing at depth 5');
    const h = byTitle.get('worker-a1-helper')!;
    assert.equal(h.endReason, 'crashed');
    assert.match(h.endDetail ?? '', /depth 5; the limit is 4/);
  });
});
