/**
 * SHUTDOWN_GRACE_MS: on a real `warren serve`, a request still waiting when the grace runs
 * out is cut off and the server exits cleanly instead of waiting for it; in process, a
 * coordinator worker stuck on a sink is not waited for past the grace.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { forEachWarren, until } from '../helpers/warrens.ts';
import { coordinatorWarren } from './helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the test that reads them
type Any = any;

const dirs: string[] = [];
const servers: ServerProcess[] = [];
after(async () => {
  await Promise.allSettled(servers.map((s) => s.crash()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

it('a stopping server cuts off a read still waiting after SHUTDOWN_GRACE_MS and exits 0', {
  timeout: 90_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-grace-'));
  dirs.push(dataDir);
  const s = await startServer({
    dataDir,
    env: { SHUTDOWN_GRACE_MS: '300', WARREN_MAX_WAIT_MS: '55000' },
  });
  servers.push(s);
  const spawned = await s.api<Any>('POST', '/v1/sessions', {
    script: { steps: [{ sleep: 600_000 }] },
    pipe: 'sync',
  });
  assert.equal(spawned.status, 200, JSON.stringify(spawned.json));
  // A read that would wait 50 s for a reply that never comes.
  const waiting = fetch(`${s.url}/v1/fds/${spawned.json.pipeFd}/read`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ wait: true, waitMs: 50_000 }),
  }).then(
    (r) => `answered ${r.status}`,
    () => 'cut off',
  );
  await until(async () => (await s.api<Any>('GET', '/v1/sessions')).status === 200, 10_000);
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    s.child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  s.child.kill('SIGTERM');
  const ended = await Promise.race([
    exit,
    new Promise<null>((r) => setTimeout(() => r(null), 40_000).unref()),
  ]);
  assert.ok(ended, `the server did not exit within 40 s (the read waits 50 s):\n${s.output()}`);
  assert.deepEqual(ended, { code: 0, signal: null });
  assert.match(s.output(), /shutdown grace ran out/);
  assert.equal(await waiting, 'cut off');
});

forEachWarren(
  'the coordinator at shutdown',
  (target) => {
    it('does not wait past the grace for a publish stuck on a sink that never answers', async () => {
      // A webhook that takes the request and never answers (the sink's own timeout is 10 s).
      let reached = 0;
      const hung = createServer(() => {
        reached++;
      });
      await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
      const warnings: string[] = [];
      const log = {
        error: () => {},
        warn: (_o: unknown, m: string) => void warnings.push(m),
        info: () => {},
        debug: () => {},
      };
      try {
        const { port } = hung.address() as { port: number };
        const h = await coordinatorWarren(
          target,
          {
            outbox: {
              intervalMs: 3_600_000,
              sinks: [
                { type: 'webhook', url: `http://127.0.0.1:${port}/`, secret: 'a-secret-of-some-length' },
              ],
            },
          },
          { kernel: { shutdownGraceMs: 200 }, log },
        );
        const agent = (await h.api('POST', '/zones/default/agents', { application_id: 'app' })).json.agent;
        await h.api('DELETE', `/zones/default/agents/${agent.id}`); // an event, and a poke to publish it
        await until(() => reached > 0 || undefined, 15_000, 'the publish to reach the webhook');
        await h.warren.close();
        assert.ok(
          warnings.includes('coordinator workers outlived the shutdown grace'),
          `warned: ${warnings.join('; ')}`,
        );
      } finally {
        hung.closeAllConnections();
        await new Promise((r) => hung.close(r));
      }
    });
  },
  ['sqlite'],
);
