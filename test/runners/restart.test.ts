/**
 * A server that dies with agents on a runner: the runner ends its agents (their groups are
 * gone), reconnects to the restarted server, and the sessions are reanimated there — once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { startServer } from '../helpers/server.ts';
import {
  cleanedUp,
  echoCommand,
  groupAlive,
  outputs,
  pgidOf,
  readUntil,
  spawnOn,
  startRunner,
  statusOf,
  until,
} from './helpers.ts';

const { servers, runners, dirs, groups } = cleanedUp();
const dataDir = mkdtempSync(join(tmpdir(), 'warren-runner-restart-'));
dirs.push(dataDir);

/** A port free right now (the restarted server must come back where the runner looks). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

it('the server is SIGKILLed: the runner ends its agents, reconnects, and they are reanimated once', async () => {
  const port = await freePort();
  const args = ['--port', String(port), '--host', '127.0.0.1', '--reconcile-interval-ms', '300'];
  const first = await startServer({ dataDir, args });
  servers.push(first);
  const tok = await first.api<{ token: string }>('POST', '/v1/runners', { name: 'r1' });
  const runner = await startRunner({ url: first.url, token: tok.json.token, name: 'r1' });
  runners.push(runner);
  const cmd = await spawnOn(first, 'runner:r1', echoCommand());
  assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
  const id = cmd.json.session.id;
  const pid = Number(
    (
      await until('the agent started', async () =>
        (await outputs(first, id)).find((l) => l.startsWith('pid ')),
      )
    ).slice(4),
  );
  const pgid = pgidOf(pid);
  groups.push(pgid);

  await first.crash();
  // Nobody is left to suspend it: the runner ends its own agents when the wire drops.
  await until(
    'the agent group gone after the server died',
    async () => (groupAlive(pgid) ? undefined : true),
    10_000,
  );

  const second = await startServer({ dataDir, args });
  servers.push(second);
  await until(
    'the runner back and the session reanimated',
    async () => {
      const out = await outputs(second, id);
      return out.filter((l) => l.startsWith('pid ')).length === 2 ? true : undefined;
    },
    30_000,
  );
  assert.notEqual(await statusOf(second, id), 'suspended');
  const pids = (await outputs(second, id)).filter((l) => l.startsWith('pid ')).map((l) => Number(l.slice(4)));
  assert.equal(pids.length, 2, 'exactly one new agent process');
  groups.push(pgidOf(pids[1]!));
  // It works there: input in, a reply out through the runner.
  const op = await second.api<{ lifecycleFd: number; pipeFd: number }>('POST', `/v1/sessions/${id}/open`, {
    pipe: 'detach',
  });
  assert.equal(op.status, 200, JSON.stringify(op.json));
  await second.api('POST', `/v1/sessions/${id}/send`, { text: 'tunnel back' });
  await readUntil(second, op.json.pipeFd, 'back');
  await second.stop();
  await runner.stop();
});
