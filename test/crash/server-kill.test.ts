import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { bootId, processStartTime } from '../../src/runtimes/process.ts';
import { runDir } from '../../src/runtimes/rundir.ts';
import { forEachStore } from '../helpers/stores.ts';
import { alive, checkRestart, type Ev, Node, SETSID, spawnForkers, within } from './harness.ts';

/**
 * No orphaned or duplicated agent processes: a real server runs five `command` agents that
 * fork children; the server is SIGKILLed; within 5 s nothing of that run is alive; a restart
 * on the same data runs exactly one process group per live session, each resumed once.
 */

forEachStore('server SIGKILL', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('ends every agent process within 5 s; a restart resumes each session once, one group each', async () => {
    const node = new Node(target);
    nodes.push(node);
    const s1 = await node.start();
    const ids = await spawnForkers(s1, node, 5, [SETSID]);
    const before = await node.marked();
    const recs = await node.records();
    assert.equal(recs.length, 5, 'every agent group is recorded');
    for (const r of recs) assert.ok(before.includes(r.pid), `recorded pid ${r.pid} carries the mark`);

    await s1.signal('SIGKILL');
    const took = await within(20_000, 'no agent process of the killed run alive', async () => {
      if ((await node.marked()).length > 0) return false;
      return before.every((p) => !alive(p)) && recs.every((r) => !alive(r.pid));
    });
    console.log(`# agents gone ${took} ms after the server's SIGKILL`);

    // Survivors the lifeline and cgroup could not end (no cgroup where the server may not make
    // one; a lifeline watcher killed first): one by its mark, one by its process record, and
    // a private file of the dead run. The restart ends them before it resumes anything.
    const byMark = node.plant({ WARREN_AGENT_MARK: `${node.run}.0123456789ab` });
    const byRecord = node.plant();
    // Recorded in another boot: same pid and start time, yet not the same process. Left alone.
    const otherBoot = node.plant();
    const record = (session: string, pid: number, boot: string | null) => ({
      session_id: session,
      pid,
      pgid: pid,
      start_time: processStartTime(pid)!,
      boot_id: boot,
      run_id: `${node.nodeId}.crashed`,
      started_at: Date.now(),
    });
    await node.withStore((store) =>
      store.writer.write(async (tx) => {
        await tx.db
          .insertInto('agent_procs')
          .values([record(ids[1]!, byRecord, bootId()), record(ids[2]!, otherBoot, 'another-boot')])
          .execute();
      }),
    );
    mkdirSync(runDir(node.run), { recursive: true });
    writeFileSync(join(runDir(node.run), 'mcp.json'), '{"token":"old"}');

    const s2 = await node.start();
    assert.ok(!alive(byMark), 'the marked survivor was ended before the server listened');
    assert.ok(!alive(byRecord), 'the recorded group was ended before the server listened');
    assert.ok(alive(otherBoot), 'a record of another boot names no process of ours');
    assert.ok(!existsSync(join(runDir(node.run), 'mcp.json')), "the dead run's private files are swept");
    const ended = (await s2.api<{ events: Ev[] }>('GET', '/v1/events?type=node.orphans_ended')).events;
    assert.equal(ended.length, 1);
    assert.deepEqual(ended[0]!.payload, { nodeId: node.nodeId, groups: 1, processes: 1 });
    await checkRestart(s2, node, ids, before, 1);
    await s2.signal('SIGKILL');
    await within(20_000, 'second run gone too', async () => (await node.marked()).length === 0);
  });
});
