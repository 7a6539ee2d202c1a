import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import pg from 'pg';
import { forEachStore, PG_URL } from '../helpers/stores.ts';
import { inProcessNodes } from './in-process.ts';

/**
 * A node takes the takeover's advisory lock at every heartbeat. Cut off from PostgreSQL while
 * it held it (its connection open, nothing forwarded: a partition), it holds it for as long as
 * that connection lives — and ending a lost node's connections was the takeover's own first
 * step, under that lock. So nobody ever declared it lost (a `.ci/run` of late-writes.test.ts
 * waited 60 s for it). The lost node's connections are now ended before the lock is asked for,
 * and the lock is asked for once they are gone: ending one only signals its backend (a CI run
 * asked too early, found the lock still held, and declared nobody lost).
 */
forEachStore(
  'cluster: a lost node holding the takeover lock',
  (target) => {
    const node = inProcessNodes('tl');
    const clients: pg.Client[] = [];
    after(async () => {
      for (const c of clients) await c.end().catch(() => {});
    });

    /**
     * A live node `self` on a fresh schema, and a ghost: a node `ghost` whose lease ran out long
     * ago, its listen connection (returned) still open. `state()` reads the ghost's row afresh.
     */
    const withGhost = async (self: string, ghost: string) => {
      const loc = target.location();
      await target.prepare(loc);
      const schema = loc.schema as string;
      const a = await node(`${loc.url}?schema=${schema}`, self);
      assert.ok(a.cluster, 'a cluster node');
      const listen = new pg.Client({ connectionString: PG_URL, application_name: `warren ${ghost} listen` });
      clients.push(listen);
      listen.on('error', () => {});
      await listen.connect();
      await listen.query(
        `insert into "${schema}".nodes (id, address, runtimes, epoch, state, joined_at, heartbeat_at, lease_until)
         values ($1, null, '["command"]', 1, 'live', 0, 0, 1)`,
        [ghost],
      );
      const state = async () => {
        const check = new pg.Client({ connectionString: PG_URL });
        clients.push(check);
        await check.connect();
        const row = await check.query<{ state: string }>(
          `select state from "${schema}".nodes where id = $1`,
          [ghost],
        );
        return row.rows[0]?.state;
      };
      return { cluster: a.cluster, listen, schema, state };
    };

    it('is declared lost all the same: its connections are ended first, and the lock with them', async () => {
      const { cluster, listen: ghost, schema, state } = await withGhost('tl-a', 'tl-ghost');
      const held = await ghost.query<{ ok: boolean }>(
        'select pg_try_advisory_lock(hashtext($1), hashtext($2)) as ok',
        [`warren:${schema}`, 'cluster:takeover'],
      );
      assert.equal(held.rows[0]?.ok, true, 'the ghost holds the takeover lock');

      await cluster.heartbeat();
      const seen = await ghost
        .query<{ state: string }>(`select state from "${schema}".nodes where id = 'tl-ghost'`)
        .then((r) => r.rows[0]?.state)
        .catch(() => 'its connection was ended');
      assert.equal(seen, 'its connection was ended');
      assert.equal(await state(), 'lost');
    });

    it('waits for an ended connection to be gone: pg_terminate_backend only signals it', async (t) => {
      const { cluster, listen: ghost, schema, state } = await withGhost('tl-b', 'tl-slow');
      await ghost.query('select pg_advisory_lock(hashtext($1), hashtext($2))', [
        `warren:${schema}`,
        'cluster:takeover',
      ]);
      const pid = (await ghost.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
      assert.ok(pid, "the ghost's backend");
      // A backend that is slow to act on the signal (a loaded machine): stopped, it exits, and
      // lets go of the lock, only once it is continued, 300 ms after the heartbeat began.
      try {
        process.kill(pid, 'SIGSTOP');
      } catch (error) {
        t.skip(`cannot stop a PostgreSQL backend here (${(error as Error).message})`);
        return;
      }
      const resume = setTimeout(() => process.kill(pid, 'SIGCONT'), 300);
      try {
        await cluster.heartbeat();
      } finally {
        clearTimeout(resume);
        try {
          process.kill(pid, 'SIGCONT');
        } catch {} // it exited already
      }
      assert.equal(await state(), 'lost');
    });
  },
  { backends: ['postgres'] },
);
