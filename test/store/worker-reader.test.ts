/**
 * SQLite's heavy reads run in a worker thread with their own connection (issue 25: a 25-word
 * knowledge search over 3,000 findings held the event loop 0.24–0.85 s). Real files, real
 * threads; nothing here reads a wall time: timers firing during a read show the loop turns.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { Store } from '../../src/store/store.ts';
import { ReadTimeoutError } from '../../src/store/worker-reader.ts';
import { systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';
import { UNTRUSTED_NICE_STEPS } from '../../src/util/thread-priority.ts';
import { newThreadNices, threadNices } from '../helpers/processes.ts';

const threads = () => Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);

/** A read that takes a while: SQLite counts to `n` one row at a time. */
const counting = (n: number) =>
  sql<{
    n: number;
  }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < ${n}) select count(*) as n from c`;

describe('the heavy reader (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-heavy-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const open = (name: string, heavyReadMs?: number) =>
    Store.open(
      { url: join(dir, `${name}.db`), durability: 'process', ...(heavyReadMs ? { heavyReadMs } : {}) },
      systemClock,
      createIds(systemClock),
    );

  it('runs a long read off the event loop, and sees what the writer committed', async () => {
    const store = await open('a');
    try {
      await store.writer.write(async (tx) => {
        await sql`create table t (x integer)`.execute(tx.db);
        await sql`insert into t values (1), (2), (3)`.execute(tx.db);
      });
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      const r = await counting(3_000_000).execute(store.heavyReader);
      clearInterval(timer);
      assert.equal(r.rows[0]?.n, 3_000_000);
      assert.ok(ticks > 0, 'timers fired while the read ran');
      const rows = await sql<{ s: number }>`select sum(x) as s from t`.execute(store.heavyReader);
      assert.equal(rows.rows[0]?.s, 6);
    } finally {
      await store.close();
    }
  });

  it('stops a read past its bound, then reads again; writes are refused', async () => {
    const store = await open('b', 200);
    try {
      // 15× the bound and more on any machine (3 s here), and no longer: a stopped worker's
      // thread runs its SQLite call to the end (terminate() waits for JavaScript), and a
      // 500M-row count kept this test's process alive 75 s after its last test.
      await assert.rejects(counting(20_000_000).execute(store.heavyReader), ReadTimeoutError);
      const r = await counting(10).execute(store.heavyReader);
      assert.equal(r.rows[0]?.n, 10, 'a new worker took the next read');
      await assert.rejects(sql`create table u (x integer)`.execute(store.heavyReader), /only reads|readonly/);
    } finally {
      await store.close();
    }
  });

  it("runs at a lower priority than the server's thread (Linux keeps one per thread)", {
    skip: process.platform !== 'linux' && 'Linux only',
  }, async () => {
    const store = await open('d');
    try {
      const before = threadNices();
      await counting(10).execute(store.heavyReader);
      const lower = Math.min(19, getPriority() + UNTRUSTED_NICE_STEPS);
      assert.deepEqual(
        newThreadNices(before, threadNices()),
        [lower],
        'the read worker, niced below this thread',
      );
    } finally {
      await store.close();
    }
  });

  it('is one thread, started by the first read and ended with the store', async () => {
    const store = await open('c');
    const before = threads();
    await counting(10).execute(store.heavyReader);
    assert.equal(threads(), before + 1);
    await store.close();
    const until = Date.now() + 5000;
    while (threads() >= before + 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    assert.ok(threads() < before + 1, 'the read worker ended with the store');
    await assert.rejects(counting(10).execute(store.heavyReader), /destroyed|closed/);
  });
});
