/**
 * The heartbeat on the runner connection, both ways (docs/runners.md, "Heartbeat"), with real
 * `warren runner` processes and a real server (200 ms beats: a runner's agents may run 1 s
 * past the last beat, the server takes a runner silent for 1.2 s for gone):
 * - a runner paused (SIGSTOP) has its agent ended by the agent's own lifeline watcher (nothing
 *   else can: the runner is stopped and the server kills no runner's processes); the server
 *   notices and moves the session to the other runner of the name — never two processes for it;
 *   the paused runner, resumed, reconnects and runs nothing twice;
 * - a server paused has its runner's agent ended by the same deadline, and the runner
 *   reconnects and runs the session again once the server is back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { cleanedUp, echoCommand, outputs, spawnOn, startRunner, statusOf, until } from './helpers.ts';

const { servers, runners, dirs } = cleanedUp();

const SETTINGS = ['--plugin-settings', JSON.stringify({ runners: { heartbeatMs: 200 } })];

async function serve(): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-runner-beat-'));
  dirs.push(dataDir);
  const s = await startServer({ dataDir, args: ['--reconcile-interval-ms', '300', ...SETTINGS] });
  servers.push(s);
  return s;
}

/** Live agent processes of `session` on this host, with their parent (the runner that started it). */
function agentsOf(session: string): Array<{ pid: number; ppid: number }> {
  const out: Array<{ pid: number; ppid: number }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The agent itself, not the lifeline watcher beside it (whose command line names it too).
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0] !== process.execPath || !argv[1]?.endsWith('runner-echo.mjs')) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const env = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (env.includes(`WARREN_SESSION_ID=${session}`))
        out.push({ pid: Number(entry), ppid: Number(fields[1]) });
    } catch {} // gone meanwhile
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a paused runner: its agent ends on its deadline, the session moves to the other runner, once', async () => {
  const server = await serve();
  const tok = await server.api<{ token: string }>('POST', '/v1/runners', { name: 'pool' });
  const r1 = await startRunner({ url: server.url, token: tok.json.token, name: 'pool' });
  runners.push(r1);
  const r2 = await startRunner({ url: server.url, token: tok.json.token, name: 'pool' });
  runners.push(r2);
  const cmd = await spawnOn(server, 'runner:pool', echoCommand());
  assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
  const id = cmd.json.session.id;
  const [first] = await until('the agent started', async () => {
    const a = agentsOf(id);
    return a.length === 1 ? a : undefined;
  });
  const [paused, other] = first!.ppid === r1.child.pid ? [r1, r2] : [r2, r1];
  assert.equal(first!.ppid, paused.child.pid, 'the agent is a child of one of the runners');
  // Beaten past several windows, it keeps running.
  await sleep(2500);
  assert.deepEqual(agentsOf(id), [first], 'the agent still runs while beaten');

  paused.child.kill('SIGSTOP');
  const samples: Array<Array<{ pid: number; ppid: number }>> = [];
  try {
    await until(
      'the session running on the other runner',
      async () => {
        const a = agentsOf(id);
        samples.push(a);
        return a.length === 1 && a[0]!.ppid === other.child.pid ? true : undefined;
      },
      30_000,
    );
    assert.deepEqual(
      samples.filter((a) => a.length > 1),
      [],
      'two processes for the session',
    );
    assert.equal(
      agentsOf(id).filter((a) => a.pid === first!.pid).length,
      0,
      'the paused runner’s agent ended while its runner was stopped',
    );
  } finally {
    paused.child.kill('SIGCONT');
  }
  await server.api('POST', `/v1/sessions/${id}/send`, { text: 'after the pause' });
  await until('the moved agent answering', async () =>
    (await outputs(server, id)).includes('echo: after the pause') ? true : undefined,
  );
  // Resumed, the paused runner reconnects (its beat overdue) and starts nothing of its own.
  await until('the paused runner connected again', async () =>
    (paused.output().match(/connected as runner:pool/g)?.length ?? 0) >= 2 ? true : undefined,
  );
  await sleep(1000);
  assert.equal(agentsOf(id).length, 1, 'one process for the session');
  assert.match(await statusOf(server, id), /idle|running/);
});

it('a paused server: its runner ends its agent on the deadline, reconnects, and runs it again', async () => {
  const server = await serve();
  const tok = await server.api<{ token: string }>('POST', '/v1/runners', { name: 'solo' });
  const runner = await startRunner({ url: server.url, token: tok.json.token, name: 'solo' });
  runners.push(runner);
  const cmd = await spawnOn(server, 'runner:solo', echoCommand());
  assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
  const id = cmd.json.session.id;
  const [first] = await until('the agent started', async () => {
    const a = agentsOf(id);
    return a.length === 1 ? a : undefined;
  });
  // Its first line recorded before the pause: a report still on the wire when the runner drops
  // the connection is the ended agent's, and is not sent again (the check below counts two lines).
  await until('the agent said its pid', async () =>
    (await outputs(server, id)).includes(`pid ${first!.pid}`) ? true : undefined,
  );
  server.child.kill('SIGSTOP');
  try {
    await until('the agent ended while the server is paused', async () =>
      agentsOf(id).some((a) => a.pid === first!.pid) ? undefined : true,
    );
    await until('the runner taking its server for lost', async () =>
      /no heartbeat from the server/.test(runner.output()) ? true : undefined,
    );
  } finally {
    server.child.kill('SIGCONT');
  }
  await until(
    'the session running again on the runner',
    async () => {
      const pids = (await outputs(server, id)).filter((l) => l.startsWith('pid '));
      return pids.length === 2 && agentsOf(id).length === 1 ? true : undefined;
    },
    30_000,
  ).catch(async (error) => {
    const why = `${(error as Error).message}; status ${await statusOf(server, id)}, outputs ${JSON.stringify(
      await outputs(server, id),
    )}, processes ${JSON.stringify(agentsOf(id))}\nrunner:\n${runner.output()}`;
    throw new Error(why);
  });
  await server.api('POST', `/v1/sessions/${id}/send`, { text: 'back' });
  await until('the agent answering again', async () =>
    (await outputs(server, id)).includes('echo: back') ? true : undefined,
  );
});
