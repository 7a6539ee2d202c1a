/**
 * Input handed to an agent on a runner is acknowledged when the turn that took it ends, as a
 * local agent's is: a runner SIGKILLed mid-turn (after its agent took the message, before it
 * reported idle) leaves the message unacknowledged, and the session's next agent, on the
 * runner that comes back, is handed it again (issue 26: at least once, runner agents included).
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { startServer } from '../helpers/server.ts';
import { cleanedUp, echoCommand, outputs, pgidOf, spawnOn, startRunner, statusOf, until } from './helpers.ts';

const { servers, runners, dirs, groups } = cleanedUp();
const dataDir = mkdtempSync(join(tmpdir(), 'warren-runner-turn-ack-'));
dirs.push(dataDir);

/** The agent processes' pids a session's output lines name, oldest first. */
const pids = (lines: string[]) => lines.filter((l) => l.startsWith('pid ')).map((l) => Number(l.slice(4)));

it('a runner killed mid-turn: the message its agent took is handed again to the next agent', async () => {
  const server = await startServer({ dataDir, args: ['--reconcile-interval-ms', '300'] });
  servers.push(server);
  const tok = await server.api<{ token: string }>('POST', '/v1/runners', { name: 'r1' });
  const first = await startRunner({ url: server.url, token: tok.json.token, name: 'r1' });
  runners.push(first);
  const cmd = await spawnOn(server, 'runner:r1', echoCommand());
  assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
  const id = cmd.json.session.id;
  // Up and idle: it reports turns, so its input is acknowledged at their ends.
  const [pid] = await until('the agent idle', async () =>
    (await statusOf(server, id)) === 'idle' ? pids(await outputs(server, id)) : undefined,
  );
  groups.push(pgidOf(pid!));

  await server.api('POST', `/v1/sessions/${id}/send`, { text: 'hold m1' });
  // The agent took it (it says so) and holds its turn: the runner dies before the turn ends.
  await until('the agent took the message', async () =>
    (await outputs(server, id)).includes('echo: hold m1') ? true : undefined,
  );
  await first.crash();

  const second = await startRunner({ url: server.url, token: tok.json.token, name: 'r1' });
  runners.push(second);
  const lines = await until(
    'the message handed again to the next agent',
    async () => {
      const out = await outputs(server, id);
      return out.filter((l) => l === 'echo: hold m1').length >= 2 ? out : undefined;
    },
    30_000,
  );
  const all = pids(lines);
  assert.equal(all.length, 2, 'one new agent');
  groups.push(pgidOf(all[1]!));
  // It came after the new agent's start: handed to it, not echoed twice by the first.
  assert.ok(lines.lastIndexOf('echo: hold m1') > lines.indexOf(`pid ${all[1]}`));
  await second.stop();
  await server.stop();
});
