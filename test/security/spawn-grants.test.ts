import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { deepTrees, forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';

/**
 * Spawn grants, as the attacks: an agent must not start programs, CLIs or working
 * directories nobody granted it, and a child never holds more than its parent.
 */

const scratch = mkdtempSync(join(tmpdir(), 'warren-grants-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const node = realpathSync(process.execPath);

async function agent(h: HttpWarren, body: Record<string, unknown> = {}): Promise<string> {
  const r = await h.api('POST', '/v1/sessions', { script: idleScript, ...body });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  await waitStatus(h.warren, r.json.session.id, 'idle');
  return r.json.session.id;
}

const spawnAs = (h: HttpWarren, id: string, body: Record<string, unknown>) =>
  h.api('POST', '/v1/sessions', body, { auth: h.tokenOf(id) });

function refused(
  r: { status: number; json: { error?: { code: string; details?: { grant?: string } } } },
  grant: string,
) {
  assert.equal(r.status, 403, JSON.stringify(r.json));
  assert.equal(r.json.error?.code, 'forbidden');
  assert.equal(r.json.error?.details?.grant, grant, JSON.stringify(r.json));
}

forEachWarren('spawn grants', (t) => {
  it('a depth-1 agent cannot run bash through a command spawn (it could run anything as the server)', async () => {
    const h = await startHttp(t);
    const a = await agent(h);
    const marker = join(scratch, `pwned-${a}`);
    const r = await spawnAs(h, a, { runtime: 'command', command: ['bash', '-c', `touch ${marker}`] });
    refused(r, 'runtimes');
    assert.match(r.json.error.message, /"command"/);
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(existsSync(marker), false, 'bash ran');
    // Nothing was spawned: the agent has no children.
    const ps = await h.api('GET', '/v1/sessions');
    assert.deepEqual(
      ps.json.sessions.filter((x: { parentId: string | null }) => x.parentId === a),
      [],
    );
  });

  it('an operator grants command with an executable allowlist: bash stays refused, node runs', async () => {
    const h = await startHttp(t);
    const a = await agent(h, { grants: { runtimes: ['script', 'command'], executables: [node] } });
    refused(await spawnAs(h, a, { runtime: 'command', command: 'bash -c true' }), 'executables');
    // A symlink to bash under another name is bash: the real path is what is matched.
    const link = join(scratch, `node-${a}`);
    symlinkSync(realpathSync('/bin/bash'), link);
    refused(await spawnAs(h, a, { runtime: 'command', command: [link, '-c', 'true'] }), 'executables');
    const ok = await spawnAs(h, a, {
      runtime: 'command',
      command: [process.execPath, '-e', 'setTimeout(()=>{},60000)'],
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
  });

  it('explicit CLI paths are executables too: claudePath and WARREN_CLAUDE_BIN pointing at bash are refused', async () => {
    const h = await startHttp(t);
    const a = await agent(h, { grants: { runtimes: ['script', 'claude-code', 'codex'] } });
    refused(
      await spawnAs(h, a, { runtime: 'claude-code', config: { claudePath: '/bin/bash' } }),
      'executables',
    );
    refused(
      await spawnAs(h, a, { runtime: 'claude-code', env: { WARREN_CLAUDE_BIN: '/bin/bash' } }),
      'executables',
    );
    refused(await spawnAs(h, a, { runtime: 'codex', config: { codexPath: '/bin/sh' } }), 'executables');
    refused(await spawnAs(h, a, { runtime: 'codex', env: { WARREN_CODEX_BIN: '/bin/sh' } }), 'executables');
  });

  it('loader hooks in a child env are refused (they would run any code inside an allowed program)', async () => {
    const h = await startHttp(t);
    const a = await agent(h, { grants: { runtimes: ['script', 'command'], executables: [node] } });
    for (const env of [
      { NODE_OPTIONS: '--require /tmp/x.js' },
      { LD_PRELOAD: '/tmp/x.so' },
      { PATH: '/tmp' },
    ]) {
      refused(await spawnAs(h, a, { runtime: 'command', command: [node, '-e', '0'], env }), 'env');
    }
  });

  it('working directories: inside the granted root only; neither `..` nor a symlink leads out', async () => {
    const h = await startHttp(t);
    const root = mkdtempSync(join(scratch, 'root-'));
    mkdirSync(join(root, 'sub'));
    symlinkSync('/etc', join(root, 'out'));
    const a = await agent(h, { cwd: root });
    const child = await spawnAs(h, a, { script: idleScript, cwd: join(root, 'sub') });
    assert.equal(child.status, 200, JSON.stringify(child.json));
    refused(await spawnAs(h, a, { script: idleScript, cwd: '/' }), 'cwd');
    refused(await spawnAs(h, a, { script: idleScript, cwd: `${root}/sub/../..` }), 'cwd');
    refused(await spawnAs(h, a, { script: idleScript, cwd: join(root, 'out') }), 'cwd');
    // Without a cwd a child works where its parent does.
    const here = await spawnAs(h, a, { script: idleScript });
    assert.equal(here.status, 200);
    const row = await h.warren.store.reader
      .selectFrom('sessions')
      .select('spec')
      .where('id', '=', here.json.session.id)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(row.spec).cwd, realpathSync(root));
  });

  it('a child never holds more than its parent, and adoption does not widen it', async () => {
    const h = await startHttp(t, { gating: deepTrees });
    // It ends on its own (completes) at its first input, so its children are adopted.
    const a = await agent(h, {
      script: { steps: [{ wait: {} }] },
      grants: { runtimes: ['script', 'command'], executables: [`${node}*`] },
    });
    // Asks for codex and bash on top: it gets what a holds, cut to what it asked for.
    const b = await spawnAs(h, a, {
      script: idleScript,
      grants: { runtimes: ['command', 'codex'], executables: [node, '/bin/*'] },
    });
    assert.equal(b.status, 200, JSON.stringify(b.json));
    const id = b.json.session.id;
    await waitStatus(h.warren, id, 'idle');
    const row = await h.warren.store.reader
      .selectFrom('sessions')
      .select('spawn_grants')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const g = JSON.parse(row.spawn_grants!);
    assert.deepEqual(g.runtimes, ['command']);
    assert.deepEqual(g.executables, [node]);
    refused(await spawnAs(h, id, { runtime: 'codex' }), 'runtimes');
    refused(await spawnAs(h, id, { runtime: 'command', command: '/bin/sh -c true' }), 'executables');
    // Its parent ends; init adopts it; its grants stay its own.
    // (Its child's SIGCHLD may already have been that input.)
    await h.api('POST', `/v1/sessions/${a}/send`, { text: 'done' });
    await waitStatus(h.warren, a, 'stopped', 20_000);
    const adopted = await h.api('GET', `/v1/sessions/${id}`);
    assert.match(adopted.json.session.parentId, /^init/);
    refused(await spawnAs(h, id, { runtime: 'command', command: '/bin/sh -c true' }), 'executables');
    refused(await spawnAs(h, id, { script: idleScript }), 'runtimes');
  });

  it('a secret grant narrows three levels down: what a grandchild asks beyond its parent is cut, then refused', async () => {
    // docs/security.md: a session passes on only the secret names it was given, and what it
    // asks for on a child's behalf is cut down to what it holds. Followed operator → A → B → C.
    const h = await startHttp(t, { gating: deepTrees });
    for (const name of ['s1', 's2'])
      assert.equal((await h.api('POST', `/v1/secrets/${name}`, { value: `value-of-${name}` })).status, 200);
    const grantsOf = async (id: string) => {
      const row = await h.warren.store.reader
        .selectFrom('sessions')
        .select('spawn_grants')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return JSON.parse(row.spawn_grants!).secrets;
    };
    const child = async (parent: string, body: Record<string, unknown>) => {
      const r = await spawnAs(h, parent, { script: idleScript, ...body });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      await waitStatus(h.warren, r.json.session.id, 'idle');
      return r.json.session.id as string;
    };
    const a = await agent(h, { grants: { secrets: ['s1', 's2'] } });
    assert.deepEqual(await grantsOf(a), ['s1', 's2']);
    // A hands B one of its two.
    const b = await child(a, { grants: { secrets: ['s1'] } });
    assert.deepEqual(await grantsOf(b), ['s1']);
    // B cannot pass on s2 itself ...
    refused(await spawnAs(h, b, { script: idleScript, secretEnv: { S2_TOKEN: 's2' } }), 'secrets');
    // ... nor get it to C by asking for it: C's grant is cut down to B's.
    const c = await child(b, { grants: { secrets: ['s1', 's2'] } });
    assert.deepEqual(await grantsOf(c), ['s1']);
    refused(await spawnAs(h, c, { script: idleScript, secretEnv: { S2_TOKEN: 's2' } }), 'secrets');
    // What C does hold, it passes on.
    const d = await spawnAs(h, c, { script: idleScript, secretEnv: { S1_TOKEN: 's1' } });
    assert.equal(d.status, 200, JSON.stringify(d.json));
  });

  it('default grants follow the kind: a script agent spawns script, nothing else', async () => {
    const h = await startHttp(t);
    const a = await agent(h);
    assert.equal((await spawnAs(h, a, { script: idleScript })).status, 200);
    for (const runtime of ['claude-code', 'codex', 'acp']) {
      refused(await spawnAs(h, a, { runtime, command: 'x' }), 'runtimes');
    }
    // An operator is bound by none of it.
    const op = await h.api('POST', '/v1/sessions', { runtime: 'command', command: [node, '-e', '0'] });
    assert.equal(op.status, 200, JSON.stringify(op.json));
  });
});
