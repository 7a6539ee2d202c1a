import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import type { LogEvent, NewEvent } from '../../src/store/events.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import type { Store } from '../../src/store/store.ts';
import { turnsDuring } from '../helpers/loop-turns.ts';
import { forEachStore } from '../helpers/stores.ts';

const ev = (n: number, extra: Partial<NewEvent> = {}): NewEvent => ({
  zone: 'z1',
  type: 'test.event',
  actor: 'kernel',
  session_id: 'ses_1',
  payload: { n },
  ...extra,
});

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

const allSeqs = async (store: Store) =>
  (await store.reader.selectFrom('events').select('seq').orderBy('seq').execute()).map((r) => Number(r.seq));

const settingKeys = async (store: Store) =>
  (await store.reader.selectFrom('settings').select('key').orderBy('key').execute()).map((r) => r.key);

forEachStore('store: open and migrate', (target) => {
  it('migrations are idempotent: reopening the same location keeps the log and migrates nothing', async () => {
    const location = target.location();
    const first = await target.open({ location });
    await first.writer.append([ev(1), ev(2), ev(3)]);
    await first.close();

    const second = await target.open({ location });
    assert.equal(await second.log.head(), 3);
    const [ref] = await second.writer.append([ev(4)]);
    assert.equal(ref!.seq, 4);
    const migrated = await sql<{ name: string }>`select name from kysely_migration`.execute(second.reader);
    // Each shipped migration ran exactly once.
    assert.deepEqual(
      migrated.rows.map((r) => r.name).sort(),
      Object.keys(await migrations(second.kind).getMigrations()).sort(),
    );

    // A second store on a location that is already open (another node / process).
    const third = await target.open({ location });
    assert.equal(await third.log.head(), 4);
  });

  it('two stores in two fresh locations of one database are independent', async () => {
    const a = await target.open();
    const b = await target.open();
    await a.writer.append([ev(1), ev(2)]);
    await b.writer.append([ev(1)]);
    assert.deepEqual(await allSeqs(a), [1, 2]);
    assert.deepEqual(await allSeqs(b), [1]);
  });

  for (const durability of ['process', 'power'] as const) {
    it(`durability '${durability}' opens, sets the writer's commit level, and appends`, async () => {
      const store = await target.open({ durability });
      const level = await store.writer.write(async (tx) => {
        if (tx.kind === 'sqlite') {
          const r = await sql<{ synchronous: number }>`pragma synchronous`.execute(tx.db);
          return String(r.rows[0]!.synchronous);
        }
        const r = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(tx.db);
        return r.rows[0]!.synchronous_commit;
      });
      const expected =
        store.kind === 'sqlite'
          ? { process: '1', power: '2' }[durability] // NORMAL, FULL
          : { process: 'off', power: 'on' }[durability];
      assert.equal(level, expected);
      const refs = await store.writer.append([ev(1), ev(2)]);
      assert.deepEqual(
        refs.map((r) => r.seq),
        [1, 2],
      );
      assert.equal((await store.log.tail(0)).length, 2);
    });
  }

  it('close waits for queued writes; writes after close are refused', async () => {
    const store = await target.open();
    const queued = Array.from({ length: 50 }, (_, i) => store.writer.append([ev(i)]));
    await store.close();
    const refs = await Promise.all(queued);
    assert.deepEqual(
      refs.map((r) => r[0]!.seq).sort((x, y) => x - y),
      range(1, 50),
    );
    await assert.rejects(store.writer.append([ev(99)]), /closed/);
  });
});

forEachStore('store: append', (target) => {
  it('assigns gap-free increasing seqs and monotonic ULID ids that sort in seq order', async () => {
    const store = await target.open();
    const refs = (
      await Promise.all([
        store.writer.append([ev(1), ev(2), ev(3)]),
        store.writer.append([ev(4)]),
        ...Array.from({ length: 200 }, (_, i) => store.writer.append([ev(10 + i), ev(1000 + i)])),
      ])
    ).flat();
    // Within one call, refs are in the call's order and consecutive.
    assert.deepEqual(
      refs.slice(0, 3).map((r) => r.seq),
      [1, 2, 3],
    );
    const n = 4 + 400;
    assert.deepEqual(
      refs.map((r) => r.seq).sort((a, b) => a - b),
      range(1, n),
    );
    for (const r of refs) {
      assert.match(r.id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.ok(r.ts > 0);
    }
    // More waves, each awaited: the log continues without gaps across batches.
    for (let w = 0; w < 5; w++) {
      const more = await Promise.all(Array.from({ length: 20 }, (_, i) => store.writer.append([ev(i)])));
      refs.push(...more.flat());
    }
    const rows = await store.log.tail(0, { limit: 10_000 });
    assert.deepEqual(
      rows.map((r) => r.seq),
      range(1, n + 100),
    );
    const ids = rows.map((r) => r.id);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `id ${i} sorts after id ${i - 1}`);
    assert.equal(new Set(ids).size, ids.length);
    // The refs handed back match what was stored.
    const byseq = new Map(rows.map((r) => [r.seq, r]));
    for (const r of refs) {
      assert.equal(byseq.get(r.seq)!.id, r.id);
      assert.equal(byseq.get(r.seq)!.ts, r.ts);
    }
    assert.equal(await store.log.head(), n + 100);
  });

  it('stores every column and round-trips the JSON payload', async () => {
    const store = await target.open();
    const payload = { text: 'héllo ✓ "quoted"\n', nested: { list: [1, 2.5, null, true], empty: {} } };
    await store.writer.append([
      {
        zone: 'zx',
        type: 'stream.message',
        actor: 'operator:ann',
        session_id: 'ses_9',
        stream_id: 'str_9',
        payload,
      },
      { zone: 'zx', type: 'bare', actor: 'kernel' },
    ]);
    const [a, b] = await store.log.tail(0);
    assert.deepEqual(
      { ...a!, id: '', ts: 0 },
      {
        seq: 1,
        id: '',
        zone: 'zx',
        ts: 0,
        type: 'stream.message',
        actor: 'operator:ann',
        session_id: 'ses_9',
        stream_id: 'str_9',
        payload,
      },
    );
    assert.equal(b!.session_id, null);
    assert.equal(b!.stream_id, null);
    assert.deepEqual(b!.payload, {});
    assert.equal(typeof a!.seq, 'number');
    assert.equal(typeof a!.ts, 'number');
  });

  it('group commit: many concurrent appends share far fewer transactions', async () => {
    const store = await target.open();
    const batches: number[] = [];
    store.writer.onCommit((events) => batches.push(events.length));

    // All in one tick: at most ceil(2000 / maxBatch) transactions.
    await Promise.all(Array.from({ length: 2000 }, (_, i) => store.writer.append([ev(i)])));
    assert.equal(
      batches.reduce((a, b) => a + b, 0),
      2000,
    );
    assert.ok(batches.length <= 4, `2000 same-tick appends took ${batches.length} transactions`);

    // 200 clients, each appending 10 times in turn: appends that arrive while a batch
    // commits join the next one.
    batches.length = 0;
    await Promise.all(
      Array.from({ length: 200 }, async (_, c) => {
        for (let i = 0; i < 10; i++) await store.writer.append([ev(c * 100 + i)]);
      }),
    );
    assert.equal(
      batches.reduce((a, b) => a + b, 0),
      2000,
    );
    assert.ok(batches.length <= 100, `2000 appends from 200 clients took ${batches.length} transactions`);
    assert.ok(Math.max(...batches) >= 50, `largest batch was ${Math.max(...batches)}`);
    assert.deepEqual(await allSeqs(store), range(1, 4000));
  });
});

forEachStore('store: units of work', (target) => {
  it('a failing unit rolls back only its own writes and events; its neighbours commit', async () => {
    const store = await target.open();
    await store.writer.write(async (tx) => {
      await tx.db.insertInto('settings').values({ key: 'taken', value: '0' }).execute();
      tx.append(ev(0, { type: 'setup' }));
    });
    const committed: LogEvent[][] = [];
    store.writer.onCommit((events) => committed.push([...events]));
    const ran: string[] = [];

    const unit = (key: string, fail?: 'throw' | 'db') =>
      store.writer.write(async (tx) => {
        tx.append(ev(1, { type: `before.${key}` }));
        await tx.db.insertInto('settings').values({ key, value: '1' }).execute();
        tx.afterCommit(() => ran.push(key));
        if (fail === 'db') {
          // A constraint violation: on PostgreSQL this aborts the transaction unless the
          // unit has its own savepoint.
          await tx.db.insertInto('settings').values({ key: 'taken', value: '1' }).execute();
        }
        tx.append(ev(2, { type: `after.${key}` }));
        if (fail === 'throw') throw new Error(`unit ${key} failed`);
        return key;
      });

    // Same tick: one batch.
    const results = await Promise.allSettled([
      unit('a'),
      unit('b', 'throw'),
      unit('c'),
      unit('d', 'db'),
      unit('e'),
    ]);
    assert.equal(committed.length, 1, 'one transaction');
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal((results[0] as PromiseFulfilledResult<string>).value, 'a');
    assert.match(String((results[1] as PromiseRejectedResult).reason), /unit b failed/);
    assert.ok((results[3] as PromiseRejectedResult).reason instanceof Error);
    assert.doesNotMatch(String((results[3] as PromiseRejectedResult).reason), /unit b/);

    assert.deepEqual(await settingKeys(store), ['a', 'c', 'e', 'taken']);
    const types = (await store.log.tail(0)).map((e) => `${e.seq}:${e.type}`);
    assert.deepEqual(types, [
      '1:setup',
      '2:before.a',
      '3:after.a',
      '4:before.c',
      '5:after.c',
      '6:before.e',
      '7:after.e',
    ]);
    assert.deepEqual(
      committed[0]!.map((e) => e.seq),
      [2, 3, 4, 5, 6, 7],
    );
    assert.deepEqual(ran, ['a', 'c', 'e'], 'afterCommit runs only for units that committed');

    // The writer carries on.
    const [next] = await store.writer.append([ev(3)]);
    assert.equal(next!.seq, 8);
  });

  it('readsFirst units take a savepoint only from their first write; each failure still undoes only its own', async () => {
    const store = await target.open();
    await store.writer.write(async (tx) => {
      await tx.db.insertInto('settings').values({ key: 'taken', value: '0' }).execute();
    });
    // One batch: readers that succeed or fail before writing, and writers that isolate first.
    const reader = (key: string, fail: boolean) =>
      store.writer.write(
        async (tx) => {
          const row = await tx.first<{ value: string }>('select value from settings where key = ?', [
            'taken',
          ]);
          assert.equal(row?.value, '0');
          tx.append(ev(1, { type: `read.${key}` }));
          if (fail) throw new Error(`reader ${key} failed`);
          return key;
        },
        { readsFirst: true },
      );
    const writer = (key: string, fail?: 'throw' | 'db') =>
      store.writer.write(
        async (tx) => {
          assert.equal(await tx.first('select value from settings where key = ?', [key]), undefined);
          tx.append(ev(1, { type: `write.${key}` }));
          await tx.isolate();
          await tx.db.insertInto('settings').values({ key, value: '1' }).execute();
          if (fail === 'db')
            await tx.db.insertInto('settings').values({ key: 'taken', value: '1' }).execute();
          if (fail === 'throw') throw new Error(`writer ${key} failed`);
          return key;
        },
        { readsFirst: true },
      );
    const results = await Promise.allSettled([
      writer('a'),
      reader('r1', false),
      reader('r2', true),
      writer('b', 'throw'),
      reader('r3', true),
      writer('c'),
      reader('r4', false),
      writer('d', 'db'),
      writer('e'),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      [
        'fulfilled',
        'fulfilled',
        'rejected',
        'rejected',
        'rejected',
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
      ],
    );
    assert.deepEqual(await settingKeys(store), ['a', 'c', 'e', 'taken']);
    assert.deepEqual(
      (await store.log.tail(0)).map((e) => e.type),
      ['write.a', 'read.r1', 'write.c', 'read.r4', 'write.e'],
    );
    // `first` sees the batch's own uncommitted writes, as `db` does.
    const seen = await store.writer.write(async (tx) => {
      await tx.db.insertInto('settings').values({ key: 'fresh', value: 'yes' }).execute();
      return tx.first<{ value: string }>('select value from settings where key = ?', ['fresh']);
    });
    assert.equal(seen?.value, 'yes');
  });

  it('run writes inside the unit: its neighbours see it, and a unit that fails takes its run writes back', async () => {
    const store = await target.open();
    await store.writer.write(async (tx) => {
      await tx.db
        .insertInto('settings')
        .values([
          { key: 'a', value: '0' },
          { key: 'b', value: '0' },
        ])
        .execute();
    });
    const set = (key: string, value: string, fail = false) =>
      store.writer.write(async (tx) => {
        await tx.run('update settings set value = ? where key = ?', [value, key]);
        tx.append(ev(1, { type: `set.${key}.${value}` }));
        if (fail) throw new Error(`set ${key} failed`);
        return (await tx.first<{ value: string }>('select value from settings where key = ?', [key]))?.value;
      });
    // One batch: each unit in its own savepoint, the failing one rolled back alone.
    const results = await Promise.allSettled([set('a', '1'), set('b', '1', true), set('a', '2')]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected')),
      ['1', 'rejected', '2'],
    );
    const rows = await store.reader
      .selectFrom('settings')
      .selectAll()
      .where('key', 'in', ['a', 'b'])
      .execute();
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.key, r.value])), { a: '2', b: '0' });
    assert.deepEqual(
      (await store.log.tail(0)).map((e) => e.type),
      ['set.a.1', 'set.a.2'],
    );
    // Alone in its batch, a failing unit's run is rolled back with the whole transaction.
    await assert.rejects(set('b', '9', true), /set b failed/);
    const b = await store.reader
      .selectFrom('settings')
      .select('value')
      .where('key', '=', 'b')
      .executeTakeFirst();
    assert.equal(b?.value, '0');
  });

  it('an append-only unit that cannot be encoded, or a malformed event, fails alone', async () => {
    const store = await target.open();
    const results = await Promise.allSettled([
      store.writer.append([ev(1)]),
      store.writer.append([ev(2), ev(3, { payload: { big: 10n } })]),
      store.writer.append([ev(4)]),
      store.writer.append([{ type: 'no.zone', actor: 'kernel' } as unknown as NewEvent]),
      store.writer.write(async (tx) => {
        tx.append(ev(5));
        tx.append({ zone: 'z1', actor: 'kernel' } as unknown as NewEvent);
      }),
      store.writer.append([ev(6)]),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    const rows = await store.log.tail(0);
    assert.deepEqual(
      rows.map((r) => r.payload.n),
      [1, 4, 6],
    );
    assert.deepEqual(
      rows.map((r) => r.seq),
      [1, 2, 3],
    );
  });

  it('afterCommit callbacks run once the batch is durable, before the caller resumes', async () => {
    const store = await target.open();
    let seenAfterCommit: number | undefined;
    const ref = await store.writer.write(async (tx) => {
      const r = tx.append(ev(1));
      tx.afterCommit(() => {
        seenAfterCommit = r.seq;
      });
      assert.equal(r.seq, 0, 'no seq before commit');
      return r;
    });
    assert.equal(seenAfterCommit, 1);
    assert.equal(ref.seq, 1);
  });

  it('a unit that appends nothing commits and resolves with its value', async () => {
    const store = await target.open();
    let calls = 0;
    store.writer.onCommit(() => calls++);
    const v = await store.writer.write(async (tx) => {
      await tx.db.insertInto('settings').values({ key: 'k', value: 'v' }).execute();
      return 42;
    });
    assert.equal(v, 42);
    assert.equal(calls, 0, 'no events, no commit notification');
    assert.deepEqual(await settingKeys(store), ['k']);
  });
});

forEachStore('store: commit listeners', (target) => {
  it("a cascade of batches, each queued by the last one's commit, lets the event loop turn between them", async () => {
    const store = await target.open();
    // Each commit queues the next unit (as a delivery waking an agent that answers does); each
    // unit spends 2 ms on the main thread, so 20 of them are 40 ms of one chain of promises
    // unless the writer pauses (past 5 ms of a turn it waits for the next turn).
    let left = 20;
    const busy = () => {
      const until = performance.now() + 2;
      while (performance.now() < until) {}
    };
    const [, turns] = await turnsDuring(async () => {
      let done!: () => void;
      const all = new Promise<void>((resolve) => {
        done = resolve;
      });
      const off = store.writer.onCommit(() => {
        if (--left > 0) void next();
        else done();
      });
      const next = () =>
        store.writer.write(async (tx) => {
          busy();
          tx.append(ev(left));
        });
      void next();
      await all;
      off();
    });
    assert.equal(left, 0);
    // 40 ms of units at most 5 ms (three units) a turn: at least six turns, not one.
    assert.ok(turns >= 6, `the loop turned ${turns} times in 20 chained batches`);
  });

  it('get committed events only, in seq order, with the stored values', async () => {
    const store = await target.open();
    const seen: LogEvent[] = [];
    const off = store.writer.onCommit((events) => seen.push(...events));
    await Promise.allSettled([
      ...Array.from({ length: 300 }, (_, i) => store.writer.append([ev(i), ev(i)])),
      store.writer.write(async (tx) => {
        tx.append(ev(-1, { type: 'doomed' }));
        throw new Error('no');
      }),
      ...Array.from({ length: 100 }, (_, i) => store.writer.append([ev(1000 + i)])),
    ]);
    for (let w = 0; w < 3; w++)
      await Promise.all(Array.from({ length: 50 }, (_, i) => store.writer.append([ev(i)])));
    assert.deepEqual(
      seen.map((e) => e.seq),
      range(1, 850),
    );
    assert.ok(!seen.some((e) => e.type === 'doomed'));
    const stored = await store.log.tail(0, { limit: 10_000 });
    assert.deepEqual(seen, stored);

    off();
    await store.writer.append([ev(1)]);
    assert.equal(seen.length, 850, 'unsubscribed');
  });

  it('a throwing listener does not break the writer or the other listeners', async (t) => {
    const store = await target.open();
    const logged = t.mock.method(console, 'error', () => {});
    let good = 0;
    store.writer.onCommit(() => {
      throw new Error('listener bug');
    });
    store.writer.onCommit((events) => {
      good += events.length;
    });
    const refs = await Promise.all(Array.from({ length: 10 }, (_, i) => store.writer.append([ev(i)])));
    assert.equal(refs.length, 10);
    const [more] = await store.writer.append([ev(11)]);
    assert.equal(more!.seq, 11);
    assert.equal(good, 11);
    assert.ok(logged.mock.callCount() >= 2);
    assert.deepEqual(await allSeqs(store), range(1, 11));
  });
});

forEachStore(
  'store: prepared statements',
  (target) => {
    it("the writer's hot statements run as named prepared statements, parsed once per connection", async () => {
      const store = await target.open();
      for (let i = 0; i < 3; i++) {
        await store.writer.write(
          async (tx) => {
            assert.ok(await tx.first('select seq from log_head where id = ?', [1]));
            tx.append(ev(i));
          },
          { readsFirst: true },
        );
      }
      // Asked on the writer's own connection: prepared statements belong to their session.
      const prepared = await store.writer.write(async (tx) =>
        sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(
          tx.db,
        ),
      );
      const texts = prepared.rows.filter((r) => r.name.startsWith('warren_')).map((r) => r.statement);
      assert.equal(texts.filter((t) => t === 'select seq from log_head where id = $1').length, 1);
      assert.equal(texts.filter((t) => t.startsWith('with h as (update log_head')).length, 1);
      assert.deepEqual(await allSeqs(store), [1, 2, 3]);
    });

    it("the log's hot reads (a read at a cursor, the tail, the head) run as named prepared statements", async () => {
      const store = await target.open();
      await store.writer.append([ev(1)]);
      // One call at a time: the reader pool hands back the connection it just released.
      for (let i = 0; i < 2; i++) {
        assert.equal((await store.log.messagesAfter('str_none', 0, 10)).length, 0);
        assert.equal((await store.log.tail(0, { limit: 5 })).length, 1);
        assert.equal((await store.log.tail(0, { limit: 5, zone: 'z1' })).length, 1);
        assert.equal(await store.log.head(), 1);
      }
      const prepared = await sql<{
        name: string;
        statement: string;
      }>`select name, statement from pg_prepared_statements`.execute(store.reader);
      const texts = prepared.rows.filter((r) => r.name.startsWith('warren_')).map((r) => r.statement);
      const named = (fragment: string) => texts.filter((t) => t.includes(fragment)).length;
      assert.equal(named('"type" = $2 and "seq" > $3'), 1, 'messagesAfter');
      assert.equal(named('where "seq" > $1 order by'), 1, 'tail');
      assert.equal(named('where "seq" > $1 and "zone" = $2'), 1, 'tail of a zone');
      assert.equal(named('from "log_head"'), 1, 'head');
    });
  },
  { backends: ['postgres'] },
);
