/**
 * `warren status`: healthy on a fresh server; degraded when the reconcile loop reports a
 * phase error or delivery lags; and, through the real CLI against a real server process,
 * exit codes 0 healthy, 1 degraded, 2 unreachable, with `--json` for scripts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { startHttp } from '../helpers/http.ts';
import { binEnv, startServer, WARREN_BIN } from '../helpers/server.ts';
import { call, forEachWarren, idleScript, until } from '../helpers/warrens.ts';

forEachWarren(
  'status',
  (t) => {
    it('is healthy on a fresh server: store, commits, reconcile, agents, plugins (GET /v1/status)', async () => {
      const h = await startHttp(t);
      await h.api('POST', '/v1/sessions', { script: idleScript });
      await until(() => h.warren.kernel.agentCounts().alive === 1);
      await h.warren.kernel.reconcile();
      const r = await h.api('GET', '/v1/status');
      assert.equal(r.status, 200);
      const s = r.json;
      assert.equal(s.status, 'healthy', JSON.stringify(s.problems));
      assert.deepEqual(s.problems, []);
      assert.equal(s.store.kind, t.kind);
      assert.equal(s.store.reachable, true);
      assert.equal(s.store.head, await h.head());
      assert.ok(s.commits.batches > 0 && s.commits.avgMs !== null);
      assert.deepEqual([s.commits.failed, s.commits.refused], [0, 0]);
      // A request refused for its input (a room name already taken) is a refusal, not a
      // failed commit: the store is fine.
      assert.equal((await h.api('POST', '/v1/streams', { name: 'taken' })).status, 200);
      assert.equal((await h.api('POST', '/v1/streams', { name: 'taken' })).status, 409);
      const after = (await h.api('GET', '/v1/status')).json;
      assert.deepEqual([after.commits.failed, after.commits.refused], [0, 1]);
      assert.equal(after.status, 'healthy');
      assert.equal(s.delivery.backlog, 0);
      assert.ok(s.reconcile.lastTick && s.reconcile.lastTick.errors.length === 0);
      assert.equal(s.agents.alive, 1);
      assert.equal(
        s.agents.sessions.reduce((n: number, x: { count: number }) => n + x.count, 0),
        2,
        'init and one',
      );
      assert.ok(s.plugins.includes('core'));
      // Operators only.
      const session = (await h.api('GET', '/v1/sessions')).json.sessions.find(
        (x: { depth: number }) => x.depth === 1,
      );
      assert.equal(
        (await h.api('GET', '/v1/status', undefined, { auth: h.tokenOf(session.id) })).status,
        403,
      );
    });

    it('is degraded when the last reconcile tick had a phase error, healthy again once it passes', async () => {
      const w = await t.open();
      let fail = true;
      w.kernel.addReconcilePhase({
        name: 'test:flaky',
        run: async () => {
          if (fail) throw new Error('disk on fire');
        },
      });
      await w.kernel.reconcile();
      const bad = await call(w, 'status');
      assert.equal(bad.status, 'degraded');
      assert.deepEqual(bad.reconcile.lastTick.errors, [{ phase: 'test:flaky', message: 'disk on fire' }]);
      assert.match(bad.problems.join('\n'), /reconcile phase test:flaky failed: disk on fire/);
      fail = false;
      await w.kernel.reconcile();
      assert.equal((await call(w, 'status')).status, 'healthy');
    });

    it('is degraded when a message waits for its agent longer than maxLagMs', async () => {
      const w = await t.open();
      // Busy for a while: what is sent meanwhile waits for the next safe point.
      const a = await call(w, 'ipc_spawn', { script: { steps: [{ sleep: 5000 }, { listen: {} }] } });
      await until(() => w.kernel.agentCounts().alive === 1);
      await call(w, 'send', { id: a.session.id, text: 'are you there' });
      await new Promise((r) => setTimeout(r, 150));
      const s = await call(w, 'status', { maxLagMs: 100 });
      assert.equal(s.status, 'degraded');
      assert.equal(s.delivery.backlog, 1);
      assert.ok(s.delivery.oldestMs >= 100);
      assert.match(s.problems.join('\n'), /delivery lags/);
      assert.equal((await call(w, 'status')).status, 'healthy', 'within the default 60 s lag');
    });

    it('is degraded, not failing, when the store cannot be read', async () => {
      const w = await t.open();
      const db = w.store.reader;
      await sql`alter table log_head rename to log_head_away`.execute(db);
      try {
        const s = await call(w, 'status');
        assert.equal(s.status, 'degraded');
        assert.equal(s.store.reachable, false);
        assert.match(s.problems.join('\n'), /the store cannot be read: .*log_head/);
      } finally {
        await sql`alter table log_head_away rename to log_head`.execute(db);
      }
      assert.equal((await call(w, 'status')).store.reachable, true);
    });
  },
  ['sqlite'],
);

/** Run the real CLI; its exit code and output. */
function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WARREN_BIN, ...args], {
      env: { ...process.env, ...binEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('warren status through the CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-status-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 0 healthy, 1 degraded, 2 unreachable; --json for scripts', async () => {
    const server = await startServer({ dataDir: join(dir, 'data') });
    try {
      const env = { WARREN_URL: server.url, WARREN_API_KEY: server.key };
      const healthy = await cli(['status'], env);
      assert.equal(healthy.code, 0, healthy.stderr);
      assert.match(healthy.stdout, /^warren is healthy \(node /);
      assert.match(healthy.stdout, /store\s+sqlite, log head \d+/);
      const json = await cli(['status', '--json'], env);
      assert.equal(json.code, 0);
      assert.equal(JSON.parse(json.stdout).status, 'healthy');

      const a = await server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
        script: { steps: [{ sleep: 10_000 }, { listen: {} }] },
      });
      await until(
        async () =>
          (await server.api<{ agents: { alive: number } }>('GET', '/v1/status')).json.agents.alive === 1,
      );
      await server.api('POST', `/v1/sessions/${a.json.session.id}/send`, { text: 'hello?' });
      await new Promise((r) => setTimeout(r, 100));
      const degraded = await cli(['status', '--max-lag-ms', '50'], env);
      assert.equal(degraded.code, 1, degraded.stdout + degraded.stderr);
      assert.match(degraded.stdout, /^warren is degraded/);
      assert.match(degraded.stdout, /problems:\n {2}- delivery lags/);
    } finally {
      await server.stop();
    }
    const gone = await cli(['status'], { WARREN_URL: server.url, WARREN_API_KEY: server.key });
    assert.equal(gone.code, 2, gone.stderr);
    assert.match(gone.stderr, /ECONNREFUSED|cannot reach|unreachable/i);
  });
});
