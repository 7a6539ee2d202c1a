/**
 * A tunnelled request carries its caller's deadline and is not executed after it (issue 26,
 * "Runners"). A real runner is paused (SIGSTOP, shorter than its heartbeat window, so nothing
 * else happens to it) while its agent makes a write through the runner's tunnel that it gives
 * 1 s; resumed, the runner reads the request after its deadline: it is answered 504 (expired)
 * and writes nothing — the write never reaches the pipe.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { startServer } from '../helpers/server.ts';
import { cleanedUp, echoCommand, outputs, readUntil, spawnOn, startRunner, until } from './helpers.ts';

const { servers, runners, dirs } = cleanedUp();
const dataDir = mkdtempSync(join(tmpdir(), 'warren-runner-deadline-'));
dirs.push(dataDir);

it('a request whose deadline passed while the runner was paused is answered expired, with no effect', async () => {
  const server = await startServer({
    dataDir,
    // Beats every second: the runner's agents may run 5 s past the last one.
    args: ['--plugin-settings', JSON.stringify({ runners: { heartbeatMs: 1000 } })],
  });
  servers.push(server);
  const tok = await server.api<{ token: string }>('POST', '/v1/runners', { name: 'r1' });
  const runner = await startRunner({ url: server.url, token: tok.json.token, name: 'r1' });
  runners.push(runner);
  const cmd = await spawnOn(server, 'runner:r1', echoCommand());
  assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
  const id = cmd.json.session.id;
  await until('the agent started', async () =>
    (await outputs(server, id)).some((l) => l.startsWith('pid ')) ? true : undefined,
  );

  await server.api('POST', `/v1/sessions/${id}/send`, { text: 'late too-late-write' });
  await until('the agent got its input', async () =>
    (await outputs(server, id)).includes('echo: late too-late-write') ? true : undefined,
  );
  // Paused before the agent's write (1.5 s after its input) and past its deadline (1 s more).
  runner.child.kill('SIGSTOP');
  try {
    await new Promise((r) => setTimeout(r, 3000));
  } finally {
    runner.child.kill('SIGCONT');
  }
  await until('the late write answered as expired', async () =>
    (await outputs(server, id)).includes('late 504') ? true : undefined,
  );
  // The pipe holds the next write and not the late one.
  await server.api('POST', `/v1/sessions/${id}/send`, { text: 'tunnel in-time-write' });
  const seen = await readUntil(server, cmd.json.pipeFd, 'in-time-write');
  assert.ok(!seen.includes('too-late-write'), `the expired write landed: ${JSON.stringify(seen)}`);
  assert.equal((await outputs(server, id)).filter((l) => l.startsWith('pid ')).length, 1, 'the same agent');
});
