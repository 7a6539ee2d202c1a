/**
 * The log's ordering promise with several writer processes on one PostgreSQL database:
 * a reader that has seen seq n and asks for seq > n never misses a row that commits later.
 * Several independent stores (separate pools, as separate nodes would have) append at
 * once while readers tail; every page a reader gets must continue exactly where it left off.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import type { NewEvent } from '../../src/store/events.ts';
import type { Store } from '../../src/store/store.ts';
import { forEachStore } from '../helpers/stores.ts';

const WRITER_STORES = 4;
const APPENDERS_PER_STORE = 8;
const WRITE_FOR_MS = 2500;

forEachStore(
  'log: concurrent writers',
  (target) => {
    it('tailing readers see every seq exactly once, in order, never past a gap', {
      timeout: 60_000,
    }, async () => {
      const location = target.location();
      // Migrate once, then open the other "nodes" on the same schema.
      const first = await target.open({ location });
      const writers: Store[] = [first];
      for (let i = 1; i < WRITER_STORES; i++) writers.push(await target.open({ location }));
      const readerStore = await target.open({ location });

      const deadline = Date.now() + WRITE_FOR_MS;
      let writing = true;
      const appended: number[] = [];

      const appender = async (store: Store, w: number, a: number) => {
        let k = 0;
        while (Date.now() < deadline) {
          const n = 1 + ((w * 7 + a * 3 + k) % 5);
          const events: NewEvent[] = Array.from({ length: n }, (_, i) => ({
            zone: 'z1',
            type: 'test.concurrent',
            actor: `node:${w}`,
            payload: { w, a, k, i },
          }));
          // Mix plain appends with units that do other work in the transaction first,
          // so batches of different sizes and lengths interleave across nodes.
          const refs =
            k % 3 === 0
              ? await store.writer.write(async (tx) => {
                  await sql`select pg_sleep(${(k % 4) / 1000})`.execute(tx.db);
                  return events.map((e) => tx.append(e));
                })
              : await store.writer.append(events);
          for (const r of refs) appended.push(r.seq);
          k += 1;
        }
      };

      // A reader: tails `seq > cursor`, and checks each page continues the last one exactly.
      const reader = async (limit: number) => {
        const seen: number[] = [];
        const violations: string[] = [];
        let cursor = 0;
        let polls = 0;
        for (;;) {
          const stillWriting = writing;
          const page = await readerStore.log.tail(cursor, { limit });
          polls += 1;
          for (const e of page) {
            if (e.seq !== cursor + 1) violations.push(`after ${cursor} saw ${e.seq}`);
            seen.push(e.seq);
            cursor = e.seq;
          }
          if (page.length === 0) {
            // Done once the writers had stopped before this (empty) read began.
            if (!stillWriting) break;
            await yieldLoop();
          }
        }
        return { seen, violations, polls };
      };

      const readers = [reader(1000), reader(64), reader(5)];
      await Promise.all(
        writers.flatMap((store, w) =>
          Array.from({ length: APPENDERS_PER_STORE }, (_, a) => appender(store, w, a)),
        ),
      );
      writing = false;
      const results = await Promise.all(readers);

      const n = appended.length;
      assert.ok(n > 1000, `only ${n} events appended`);
      const expected = Array.from({ length: n }, (_, i) => i + 1);
      assert.deepEqual(
        [...appended].sort((a, b) => a - b),
        expected,
        'the writers got seqs 1..N',
      );
      for (const r of results) {
        assert.deepEqual(r.violations, [], 'no reader ever saw past a gap');
        assert.equal(r.seen.length, n);
        assert.deepEqual(r.seen, expected, 'each reader saw exactly 1..N, once each, in order');
        assert.ok(r.polls > 10, 'the reader polled while the writers ran');
      }

      const stats = await readerStore.reader
        .selectFrom('events')
        .select((eb) => [
          eb.fn.countAll<number>().as('rows'),
          eb.fn.min('seq').as('lo'),
          eb.fn.max('seq').as('hi'),
          eb.fn.count<number>('id').distinct().as('ids'),
        ])
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        { rows: Number(stats.rows), lo: Number(stats.lo), hi: Number(stats.hi), ids: Number(stats.ids) },
        { rows: n, lo: 1, hi: n, ids: n },
      );
      assert.equal(await readerStore.log.head(), n);
      // Every node took part, and batches from different nodes interleave.
      const rows = await readerStore.log.tail(0, { limit: 10_000 });
      const actors = new Set(rows.map((r) => r.actor));
      assert.equal(actors.size, WRITER_STORES);
    });
  },
  { backends: ['postgres'] },
);
