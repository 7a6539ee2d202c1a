import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, it } from 'node:test';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { deepTrees, forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';

/**
 * Spawn grants down a tree, the promises of docs/security.md ("Spawn grants") that a mutation
 * run (docs/testing.md) found no test for: each check below was removed from
 * src/kernel/grants.ts in turn and the suite still passed.
 */

const scratch = mkdtempSync(join(tmpdir(), 'warren-narrow-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const spawnAs = (h: HttpWarren, id: string | null, body: Record<string, unknown>) =>
  h.api('POST', '/v1/sessions', { script: idleScript, ...body }, id ? { auth: h.tokenOf(id) } : {});

async function live(h: HttpWarren, id: string | null, body: Record<string, unknown> = {}): Promise<string> {
  const r = await spawnAs(h, id, body);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  await waitStatus(h.warren, r.json.session.id, 'idle');
  return r.json.session.id;
}

function refused(
  r: { status: number; json: { error?: { code: string; details?: { grant?: string } } } },
  grant: string,
) {
  assert.equal(r.status, 403, JSON.stringify(r.json));
  assert.equal(r.json.error?.code, 'forbidden');
  assert.equal(r.json.error?.details?.grant, grant, JSON.stringify(r.json));
}

const storedGrants = async (h: HttpWarren, id: string) => {
  const row = await h.warren.store.reader
    .selectFrom('sessions')
    .select('spawn_grants')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return JSON.parse(row.spawn_grants!);
};

forEachWarren('spawn grants down a tree', (t) => {
  it('a cwd grant a session asks for its child is cut down to its own roots (a grandchild cannot work outside)', async () => {
    const h = await startHttp(t, { gating: deepTrees });
    const root = realpathSync(mkdtempSync(join(scratch, 'root-')));
    mkdirSync(join(root, 'sub'));
    const a = await live(h, null, { cwd: root });
    // A asks for `/` on B's behalf: B gets only what lies in A's root.
    const b = await live(h, a, { cwd: join(root, 'sub'), grants: { cwd: ['/', join(root, 'sub')] } });
    assert.deepEqual((await storedGrants(h, b)).cwd, [join(root, 'sub')]);
    refused(await spawnAs(h, b, { cwd: scratch }), 'cwd');
    refused(await spawnAs(h, b, { cwd: '/' }), 'cwd');
    assert.equal((await spawnAs(h, b, { cwd: join(root, 'sub') })).status, 200);
  });

  it("a root's own parent is outside it", async () => {
    const h = await startHttp(t);
    const root = realpathSync(mkdtempSync(join(scratch, 'root-')));
    const a = await live(h, null, { cwd: root });
    refused(await spawnAs(h, a, { cwd: `${root}/..` }), 'cwd');
    refused(await spawnAs(h, a, { cwd: dirname(root) }), 'cwd');
  });

  it('executable grants must be absolute: a bare name is refused, from an operator too', async () => {
    const h = await startHttp(t);
    for (const pattern of ['python3', 'bin/*', '*']) {
      const r = await spawnAs(h, null, {
        grants: { runtimes: ['script', 'command'], executables: [pattern] },
      });
      assert.equal(r.status, 400, `${pattern}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, 'invalid_input');
      assert.match(r.json.error.message, /absolute path glob/);
    }
  });

  it('network: the child of a `none` session gets none, and asking for full is refused', async () => {
    const h = await startHttp(t, { gating: deepTrees });
    const a = await live(h, null, { grants: { network: 'none' } });
    assert.equal((await storedGrants(h, a)).network, 'none');
    refused(await spawnAs(h, a, { grants: { network: 'full' } }), 'network');
    const b = await live(h, a);
    assert.equal((await storedGrants(h, b)).network, 'none');
    refused(await spawnAs(h, b, { grants: { network: 'full' } }), 'network');
    // An operator's `full` child may hand on full.
    const c = await live(h, null, { grants: { network: 'full' } });
    assert.equal((await storedGrants(h, await live(h, c, { grants: { network: 'full' } }))).network, 'full');
  });

  it("secretEnv cannot fill warren's own variables, even from a secret the session holds", async () => {
    const h = await startHttp(t);
    assert.equal((await h.api('POST', '/v1/secrets/tok', { value: 'a-token-value' })).status, 200);
    const a = await live(h, null, { grants: { secrets: ['tok'] } });
    for (const variable of ['WARREN_TOKEN', 'WARREN_API_KEY']) {
      const r = await spawnAs(h, a, { secretEnv: { [variable]: 'tok' } });
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.match(r.json.error.message, new RegExp(`warren's own ${variable}`));
    }
    const op = await spawnAs(h, null, { secretEnv: { WARREN_TOKEN: 'tok' } });
    assert.equal(op.status, 400, JSON.stringify(op.json));
  });

  it('secrets by default: a session holds the names it was given, and an operator references any', async () => {
    const h = await startHttp(t, { gating: deepTrees });
    for (const name of ['given', 'other'])
      assert.equal((await h.api('POST', `/v1/secrets/${name}`, { value: `value-of-${name}` })).status, 200);
    // No `grants` asked: its secrets grant is the names its own secretEnv was given.
    const a = await live(h, null, { secretEnv: { GIVEN_TOKEN: 'given' } });
    assert.deepEqual((await storedGrants(h, a)).secrets, ['given']);
    assert.equal((await spawnAs(h, a, { secretEnv: { GIVEN_TOKEN: 'given' } })).status, 200);
    refused(await spawnAs(h, a, { secretEnv: { OTHER_TOKEN: 'other' } }), 'secrets');
  });

  it("a session row from before grants were stored gets its kind's defaults, not everything", async () => {
    const h = await startHttp(t, { gating: deepTrees });
    assert.equal((await h.api('POST', '/v1/secrets/old', { value: 'an-old-value' })).status, 200);
    const root = realpathSync(mkdtempSync(join(scratch, 'root-')));
    const a = await live(h, null, {
      cwd: root,
      grants: { runtimes: ['script', 'command'], secrets: ['old'] },
    });
    await h.warren.store.writer.write(async (tx) => {
      await tx.db.updateTable('sessions').set({ spawn_grants: null }).where('id', '=', a).execute();
    });
    // A script agent's defaults: script only, its own working directory, no secrets.
    refused(await spawnAs(h, a, { runtime: 'command', command: [process.execPath, '-e', '0'] }), 'runtimes');
    refused(await spawnAs(h, a, { cwd: scratch }), 'cwd');
    refused(await spawnAs(h, a, { secretEnv: { OLD_TOKEN: 'old' } }), 'secrets');
    assert.equal((await spawnAs(h, a, { cwd: root })).status, 200);
  });

  it('a command agent is granted no executable of its own by default', async () => {
    const h = await startHttp(t);
    const r = await h.api('POST', '/v1/sessions', {
      runtime: 'command',
      command: [process.execPath, '-e', 'setTimeout(() => {}, 60000)'],
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual((await storedGrants(h, r.json.session.id)).executables, []);
  });
});
