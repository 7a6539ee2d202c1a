/**
 * Remote runners end to end: a real server process and real `warren runner` processes (a
 * process on this host stands for another host), on SQLite and PostgreSQL. Agents on a
 * runner, messages both ways, the runner SIGKILLed (sessions suspended, process groups gone),
 * restarted (reanimated, nothing lost), a revoked token refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import type { DialectKind } from '../../src/store/dialect.ts';
import { startServer } from '../helpers/server.ts';
import { forEachStore } from '../helpers/stores.ts';
import {
  cleanedUp,
  echoCommand,
  echoScript,
  groupAlive,
  outputs,
  pgidOf,
  readUntil,
  spawnOn,
  startRunner,
  statusOf,
  until,
} from './helpers.ts';

/** The scenario on the given stores (one file per backend keeps each file well under a minute). */
export function runnerScenario(backends: DialectKind[]): void {
  forEachStore(
    'remote runners',
    (target) => {
      // Even after a failure: every runner and server ends, then no agent group is left.
      const { servers, runners, dirs, groups } = cleanedUp();

      it('runs agents on a runner; a SIGKILLed runner suspends them, a new one reanimates them, nothing lost', async () => {
        const loc = target.location();
        const dataDir = mkdtempSync(join(tmpdir(), 'warren-runners-'));
        dirs.push(dataDir);
        const server = await startServer({
          dataDir,
          db: loc.schema ? `${loc.url}?schema=${loc.schema}` : loc.url,
          args: ['--reconcile-interval-ms', '500'],
        });
        servers.push(server);
        const tok = await server.api<{ token: string; environment: string }>('POST', '/v1/runners', {
          name: 'r1',
        });
        assert.equal(tok.status, 200);
        assert.equal(tok.json.environment, 'runner:r1');
        const first = await startRunner({ url: server.url, token: tok.json.token, name: 'r1' });
        runners.push(first);

        // A command agent and a script agent on the runner.
        const cmd = await spawnOn(server, 'runner:r1', echoCommand());
        assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
        const scr = await spawnOn(server, 'runner:r1', echoScript());
        assert.equal(scr.status, 200, JSON.stringify(scr.json));
        const cmdId = cmd.json.session.id;
        const scrId = scr.json.session.id;
        const pidLine = await until('the command agent started', async () =>
          (await outputs(server, cmdId)).find((l) => l.startsWith('pid ')),
        );
        const pid = Number(pidLine.slice(4));
        const pgid = pgidOf(pid);
        groups.push(pgid);
        await until('the script agent started', async () =>
          (await outputs(server, scrId)).includes('script up') ? true : undefined,
        );
        const show = await server.api<{ status: string; connectionList: Array<{ agents: string[] }> }>(
          'GET',
          '/v1/runners/r1',
        );
        assert.equal(show.json.status, 'online');
        assert.deepEqual(new Set(show.json.connectionList[0]?.agents), new Set([cmdId, scrId]));

        // Messages both ways: input in; output, a syscall through the runner's tunnel (command)
        // and through its wire (script) out.
        await server.api('POST', `/v1/sessions/${cmdId}/send`, { text: 'tunnel t1' });
        await readUntil(server, cmd.json.pipeFd, 't1');
        await until('the agent saw its tunnel call answered', async () =>
          (await outputs(server, cmdId)).some((l) => /^tunnel 200 http:\/\/127\.0\.0\.1:\d+$/.test(l))
            ? true
            : undefined,
        );
        await server.api('POST', `/v1/sessions/${cmdId}/send`, { text: 'mcp m1' });
        await readUntil(server, cmd.json.pipeFd, 'm1');
        await until('the agent saw its MCP call answered', async () =>
          (await outputs(server, cmdId)).includes('mcp 200 ok') ? true : undefined,
        );
        await server.api('POST', `/v1/sessions/${scrId}/send`, { text: 'hello' });
        await readUntil(server, scr.json.pipeFd, 'script got hello');
        // Their turns are over (idle): what they took is acknowledged. A runner dying before
        // that hands it again to the next agent, as any turn cut off is (at least once).
        for (const id of [cmdId, scrId])
          await until(`${id} idle`, async () => ((await statusOf(server, id)) === 'idle' ? true : undefined));

        // The runner dies: its sessions are suspended, its agents' process groups are gone.
        await first.crash();
        for (const id of [cmdId, scrId]) {
          await until(`${id} suspended`, async () =>
            (await statusOf(server, id)) === 'suspended' ? true : undefined,
          );
        }
        await until('the agent group is gone', async () => (groupAlive(pgid) ? undefined : true), 20_000);
        const down = await spawnOn(server, 'runner:r1', echoCommand());
        assert.equal(down.status, 503);
        assert.equal(down.json.error?.code, 'unavailable');

        // Messages written meanwhile wait in the log; the sessions stay suspended.
        await server.api('POST', `/v1/sessions/${cmdId}/send`, { text: 'while down' });
        await server.api('POST', `/v1/sessions/${scrId}/send`, { text: 'later' });
        assert.equal(await statusOf(server, cmdId), 'suspended');

        // A runner of that name is back: both reanimate there and get what waited, once.
        const second = await startRunner({ url: server.url, token: tok.json.token, name: 'r1' });
        runners.push(second);
        await readUntil(server, scr.json.pipeFd, 'script got later');
        const lines = await until('the command got what waited', async () => {
          const out = await outputs(server, cmdId);
          return out.includes('echo: while down') ? out : undefined;
        });
        assert.equal(lines.filter((l) => l === 'echo: while down').length, 1);
        const pids = lines.filter((l) => l.startsWith('pid ')).map((l) => Number(l.slice(4)));
        assert.equal(pids.length, 2, 'one new agent process, not two');
        groups.push(pgidOf(pids[1]!));
        for (const id of [cmdId, scrId]) assert.notEqual(await statusOf(server, id), 'suspended');

        // Revoked: the runner is disconnected and ends; its token is refused from then on.
        const rev = await server.api<{ disconnected: number }>('POST', '/v1/runners/r1/revoke');
        assert.equal(rev.json.disconnected, 1);
        assert.equal(await second.exited, 3);
        await until('sessions suspended after the revoke', async () =>
          (await statusOf(server, cmdId)) === 'suspended' ? true : undefined,
        );
        await until('the second agent group is gone', async () =>
          groupAlive(pgidOf_safe(pids[1]!)) ? undefined : true,
        );
        const refused = await startRunner({
          url: server.url,
          token: tok.json.token,
          name: 'r1',
          connected: false,
        });
        runners.push(refused);
        assert.equal(await refused.exited, 3);
        assert.match(refused.output(), /refused the token/);
        await server.stop();
      });
    },
    { backends },
  );
}

/** A process's group if it still runs, else its pid (a group leader's pgid is its pid). */
function pgidOf_safe(pid: number): number {
  try {
    return pgidOf(pid);
  } catch {
    return pid;
  }
}
