import assert from 'node:assert/strict';
import { it } from 'node:test';
import { follow } from '../../src/kernel/follow.ts';
import type { LogEvent } from '../../src/store/events.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { call, forEachWarren, op } from '../helpers/warrens.ts';

async function logAfter(w: Warren, after: number): Promise<number[]> {
  await w.store.writer.drained();
  return (await w.store.log.tail(after, { limit: 10_000, zone: 'default' })).map((e) => e.seq);
}

async function room(w: Warren, name: string): Promise<number> {
  return (await call(w, 'streams_create', { name })).fd;
}

forEachWarren('kernel follow(): the log, then live commits', (t) => {
  it('no gap and no repeat at the seam, with commits landing during catch-up', async () => {
    const w = await t.open();
    const fd = await room(w, 'seam');
    for (let i = 0; i < 40; i++) await call(w, 'ipc_write', { fd, message: `old ${i}` });
    const ac = new AbortController();
    const got: number[] = [];
    const writes = (async () => {
      for (let i = 0; i < 40; i++) await call(w, 'ipc_write', { fd, message: `new ${i}` });
    })();
    // Small pages: the catch-up takes many reads while the writes above commit.
    for await (const e of follow(w.store, op, {}, 0, { signal: ac.signal, page: 7 })) {
      got.push(e.seq);
      if (got.length === 1) await writes;
      if (e.type === 'stream.message' && (e.payload as { text?: string }).text === 'new 39') ac.abort();
    }
    assert.deepEqual(got, await logAfter(w, 0));
  });

  it('a reader far behind is sent back to the log, not buffered without bound, and misses nothing', async () => {
    const w = await t.open();
    const fd = await room(w, 'slow');
    const start = await w.store.log.head();
    const ac = new AbortController();
    const it = follow(w.store, op, { type: 'stream.message' }, start, { signal: ac.signal, maxBuffered: 5 });
    const first = it.next();
    await call(w, 'ipc_write', { fd, message: 'm 0' });
    const got: LogEvent[] = [(await first).value as LogEvent];
    // The reader stalls while 60 commits land: far past its buffer of 5.
    for (let i = 1; i < 60; i++) await call(w, 'ipc_write', { fd, message: `m ${i}` });
    while (got.length < 60) got.push((await it.next()).value as LogEvent);
    assert.deepEqual(
      got.map((e) => (e.payload as { text: string }).text),
      Array.from({ length: 60 }, (_, i) => `m ${i}`),
    );
    ac.abort();
    assert.equal((await it.next()).done, true);
  });

  it('ends when aborted while waiting; sees only its zone', async () => {
    const w = await t.open();
    await call(w, 'streams_create', { name: 'elsewhere' }, { ...op, zone: 'other' } as typeof op);
    const ac = new AbortController();
    const it = follow(w.store, op, {}, 0, { signal: ac.signal });
    const seen: LogEvent[] = [];
    const done = (async () => {
      for await (const e of it) seen.push(e);
    })();
    setTimeout(() => ac.abort(), 200);
    await done;
    assert.ok(seen.length > 0);
    assert.ok(seen.every((e) => e.zone === 'default'));
  });
});
