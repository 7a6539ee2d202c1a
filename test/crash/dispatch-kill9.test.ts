import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';
import { Node, sleep, within } from './harness.ts';

/**
 * A kill -9 during dispatch neither loses nor duplicates a task's session: a real server
 * dispatches a burst of ready tasks (150 released at once by one dependency completing), is
 * SIGKILLed in the middle, and restarts on the same data. Every task ends up with exactly one
 * session, made for its one attempt, and every task runs to completion.
 */

const N = 150;

type Task = { id: string; status: string; attempts: number; sessionId: string | null };

forEachStore('kill -9 mid-dispatch', (target) => {
  const nodes: Node[] = [];
  after(async () => {
    for (const n of nodes) await n.cleanup();
  });

  it('every task gets exactly one session per attempt, none lost', async () => {
    const node = new Node(target, {
      kernel: {
        reconcileIntervalMs: 300,
        limits: { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 2 * N },
      },
    });
    nodes.push(node);
    const s1 = await node.start();
    const gate = (
      await s1.api<{ task: Task }>('POST', '/v1/tasks', {
        title: 'gate',
        prompt: 'open the gate',
        hold: true,
        spawn: { script: { steps: [{ say: 'open' }] } },
      })
    ).task;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const t = await s1.api<{ task: Task }>('POST', '/v1/tasks', {
        title: `t${i}`,
        prompt: `task ${i}`,
        dependsOn: [gate.id],
        spawn: { script: { steps: [{ say: `done ${i}` }] } },
      });
      ids.push(t.task.id);
    }
    // Watched in the database, not through the server (whose answers wait behind the burst):
    // crash as soon as the burst has begun.
    await node.withStore(async (store) => {
      await s1.api('POST', `/v1/tasks/${gate.id}/start`, {});
      const t0 = Date.now();
      for (;;) {
        const n = await store.reader
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('type', '=', 'task.dispatched')
          .executeTakeFirstOrThrow();
        if (Number(n.n) >= 3) break; // the gate's and two of the burst
        if (Date.now() - t0 > 30_000) throw new Error('the burst never began');
        await sleep(2);
      }
      s1.child.kill('SIGKILL');
    });
    await s1.signal('SIGKILL'); // reaped

    const before = await node.withStore((store) =>
      store.reader
        .selectFrom('orchestration_tasks' as never)
        .select(['status' as never])
        .where('id' as never, 'in', ids as never)
        .execute(),
    );
    const started = (before as Array<{ status: string }>).filter(
      (r) => r.status !== 'pending' && r.status !== 'ready',
    );
    console.log(`# ${started.length} of ${N} tasks had a session when the server was killed`);
    assert.ok(started.length < N, 'the server was killed in the middle of the burst');

    const s2 = await node.start();
    await within(120_000, 'every task complete', async () => {
      const page = await s2.api<{ tasks: Task[] }>('GET', `/v1/tasks?status=complete&limit=1000`);
      return page.tasks.filter((t) => ids.includes(t.id)).length === N;
    });
    await s2.quiescent(); // a duplicate dispatch is in the log by now

    const sessions = await node.withStore((store) =>
      store.reader
        .selectFrom('sessions')
        .select(['id', 'idempotency_key', 'status', 'end_reason'])
        .where('idempotency_key', 'like', 'task:%')
        .execute(),
    );
    const tasks = (await s2.api<{ tasks: Task[] }>('GET', `/v1/tasks?limit=1000`)).tasks;
    for (const id of ids) {
      const t = tasks.find((x) => x.id === id);
      assert.ok(t, `${id} is listed`);
      assert.equal(t.status, 'complete', `${id} completed`);
      assert.equal(t.attempts, 1, `${id} was dispatched once`);
      const mine = sessions.filter((s) => s.idempotency_key?.startsWith(`task:${id}:`));
      assert.equal(mine.length, 1, `${id} has exactly one session`);
      assert.equal(mine[0]?.idempotency_key, `task:${id}:1`);
      assert.equal(mine[0]?.id, t.sessionId, `${id} records the session its attempt made`);
    }
    const dispatched = await s2.api<{ events: Array<{ payload: { task: string } }> }>(
      'GET',
      '/v1/events?type=task.dispatched&limit=10000',
    );
    for (const id of ids) {
      assert.equal(
        dispatched.events.filter((e) => e.payload.task === id).length,
        1,
        `${id} has one task.dispatched event`,
      );
    }
  });
});
