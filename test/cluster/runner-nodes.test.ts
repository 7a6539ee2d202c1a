import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { type Server, within } from '../crash/harness.ts';
import { describeOwnPostgres } from '../helpers/own-postgres.ts';
import { type RunnerProcess, startRunner } from '../runners/helpers.ts';
import { Cluster, echoProcesses, FAST, readUntil, spawnEcho, tearDown } from './harness.ts';
import { ownerOf } from './rows.ts';

/**
 * A runner given the nodes of a cluster (`warren runner --server <a>,<b>`) connects to the
 * first; when that node is gone it connects to the other, and its session runs again there:
 * one agent process, answering through the other node.
 */
describeOwnPostgres('cluster: a runner given a list of nodes', (db) => {
  const clusters: Cluster[] = [];
  const runners: RunnerProcess[] = [];
  const sessions: string[] = [];
  after(() => tearDown(clusters, runners, sessions));

  it('its node stopped, it reconnects to the other and its session runs there', async () => {
    const c = new Cluster({ url: db().url, schema: 'runner_nodes', durability: 'process' }, 2, {
      ...FAST,
      cluster: { ...FAST.cluster, mode: 'on' },
    });
    clusters.push(c);
    const [a, b] = (await c.startAll()) as [Server, Server];
    const { token } = await a.api<{ token: string }>('POST', '/v1/runners', { name: 'pool' });
    const runner = await startRunner({ url: `${a.url},${b.url}`, token, name: 'pool' });
    runners.push(runner);
    assert.match(runner.output(), new RegExp(`connected as runner:pool \\(\\S+\\) to ${a.url}`));

    const g = await spawnEcho(a, 'echo-on-runner', { environmentId: 'runner:pool' });
    sessions.push(g.id);
    await within(30_000, 'the agent runs on the runner', () => echoProcesses([g.id]).get(g.id)?.length === 1);

    await a.signal('SIGKILL');
    await within(30_000, 'the runner connected to the other node', () =>
      runner.output().includes(`to ${b.url}`),
    );
    await within(60_000, 'the session live again, owned by the other node, one process', async () => {
      const row = await ownerOf(c, g.id);
      return (
        ['idle', 'running'].includes(row.status) &&
        row.owner_node === c.nodes[1]!.nodeId &&
        echoProcesses([g.id]).get(g.id)?.length === 1
      );
    });
    await b.api('POST', `/v1/sessions/${g.id}/send`, { text: 'after the move' });
    await readUntil(b, g.pipeFd, 'echo:after the move', 20_000);
    assert.equal(runner.child.exitCode, null, runner.output());
  });
});
