import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';
import { operator } from '../../src/vocab/principal.ts';
import { forEachStore } from '../helpers/stores.ts';
import { until } from '../helpers/warrens.ts';
import { inProcessNodes } from './in-process.ts';

/**
 * Two servers given one node id on one database (two containers with the same host name and
 * data path derive the same one). Each join takes the id under a new epoch, so the earlier
 * server found its lease gone at its next heartbeat, joined again and fenced the later, which
 * did the same: the two took the id from each other at every heartbeat. Now the later join
 * keeps it; the earlier stands aside, fenced and saying why, and joins again once that lease is
 * gone.
 */
forEachStore(
  'cluster: two servers with one node id',
  (target) => {
    const node = inProcessNodes('twin', { leaseMs: 3000, heartbeatMs: 250, pollMs: 200 });

    it('the later keeps the id; the earlier stands aside while it is held, then joins again', async () => {
      const loc = target.location();
      const db = `${loc.url}?schema=${loc.schema}`;
      const client = new pg.Client({ connectionString: loc.url });
      await client.connect();
      try {
        const epoch = async () =>
          Number(
            (await client.query(`select epoch from "${loc.schema}".nodes where id = 'twin'`)).rows[0]?.epoch,
          );
        const a = await node(db, 'twin');
        assert.deepEqual(a.health(), { ok: true });
        const b = await node(db, 'twin');
        assert.equal(await epoch(), 2);

        const aside = await until(
          () => {
            const h = a.health();
            return h.ok ? null : h;
          },
          15_000,
          'the earlier server fenced',
        );
        assert.match(aside.reason, /another server holds node id twin \(epoch 2\)/);
        // Its heartbeats go on (every 250 ms) and find the id still held: none joins again.
        for (let i = 0; i < 12; i++) {
          await new Promise((r) => setTimeout(r, 100));
          assert.equal(await epoch(), 2, 'the earlier server took the id back');
          assert.deepEqual(b.health(), { ok: true });
          assert.equal(a.health().ok, false);
        }
        const op = operator();
        await assert.rejects(a.call(op, 'streams_create', { name: 'from-a' }), /unavailable|fenced|lease/);

        // The later one leaves: its lease ends, and the earlier joins again and serves.
        await node.close(b);
        await until(() => a.health().ok, 15_000, 'the earlier server serving again');
        assert.equal(await epoch(), 3);
        await a.call(op, 'streams_create', { name: 'from-a' });
      } finally {
        await client.end();
      }
    });
  },
  { backends: ['postgres'] },
);
