/**
 * SHUTDOWN_GRACE_MS on a real `warren serve`: a request still waiting when the grace runs
 * out is cut off, and the server exits cleanly instead of waiting for it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { until } from '../helpers/warrens.ts';

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
