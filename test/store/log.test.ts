import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import type { LogEvent, NewEvent } from '../../src/store/events.ts';
import {
  DEFAULT_EVENTS_LIMIT,
  DEFAULT_SESSION_EVENTS_LIMIT,
  DEFAULT_TRANSCRIPT_LIMIT,
  type LogReader,
} from '../../src/store/log.ts';
import { manualClock } from '../helpers/clock.ts';
import { forEachStore } from '../helpers/stores.ts';

const T0 = 1_700_000_000_000;

/** The fixture, as batches written at known times. Seqs follow in this order. */
function fixture(): Array<{ ts: number; events: NewEvent[] }> {
  const many = (n: number, f: (i: number) => NewEvent) => Array.from({ length: n }, (_, i) => f(i));
  return [
    // 600 > the session default of 500.
    {
      ts: T0,
      events: many(600, (i) => ({
        zone: 'z1',
        type: 'agent.output',
        actor: 'ses_a',
        session_id: 'ses_a',
        payload: { i },
      })),
    },
    {
      ts: T0 + 1000,
      events: many(50, (i) => ({
        zone: 'z1',
        type: 'stream.message',
        actor: 'ses_b',
        session_id: 'ses_b',
        stream_id: 'str_x',
        payload: { i },
      })),
    },
    // Messages interleaved with other events on the same stream.
    {
      ts: T0 + 2000,
      events: many(60, (i) => ({
        zone: 'z2',
        type: i % 2 === 0 ? 'stream.message' : 'stream.attached',
        actor: 'ses_b',
        session_id: i % 3 === 0 ? 'ses_a' : 'ses_b',
        stream_id: 'str_y',
        payload: { i },
      })),
    },
    {
      ts: T0 + 3000,
      events: many(150, (i) => ({ zone: 'z2', type: 'task.created', actor: 'operator:ann', payload: { i } })),
    },
    {
      ts: T0 + 4000,
      events: many(130, (i) => ({
        zone: 'z1',
        type: 'stream.message',
        actor: 'operator:ann',
        stream_id: 'str_x',
        payload: { i },
      })),
    },
  ];
}

const seqs = (events: LogEvent[]) => events.map((e) => e.seq);
const newestFirst = (events: LogEvent[]) => [...events].sort((a, b) => b.seq - a.seq);

forEachStore('log: reads by cursor', (target) => {
  let log: LogReader;
  /** What the reads should find, computed from the fixture rather than the database. */
  let model: LogEvent[];

  before(async () => {
    const clock = manualClock(T0);
    const store = await target.open({ clock });
    model = [];
    let seq = 0;
    for (const batch of fixture()) {
      clock.set(batch.ts);
      await store.writer.append(batch.events);
      for (const e of batch.events) {
        seq += 1;
        model.push({
          seq,
          id: '',
          zone: e.zone,
          ts: batch.ts,
          type: e.type,
          actor: e.actor,
          session_id: e.session_id ?? null,
          stream_id: e.stream_id ?? null,
          payload: e.payload ?? {},
        });
      }
    }
    log = store.log;
    assert.equal(await log.head(), 990);
  });

  it('the stored rows match the model', async () => {
    const all = await log.tail(0, { limit: 10_000 });
    assert.deepEqual(
      all.map((e) => ({ ...e, id: '' })),
      model,
    );
  });

  it('sessionEvents: oldest first, default limit 500, `from` is exclusive, `limit` caps', async () => {
    const a = model.filter((e) => e.session_id === 'ses_a');
    assert.equal(DEFAULT_SESSION_EVENTS_LIMIT, 500);
    assert.deepEqual(seqs(await log.sessionEvents('ses_a')), seqs(a.slice(0, 500)));
    assert.deepEqual(
      seqs(await log.sessionEvents('ses_a', { from: 500 })),
      seqs(a.filter((e) => e.seq > 500)),
    );
    assert.deepEqual(seqs(await log.sessionEvents('ses_a', { from: 10, limit: 5 })), [11, 12, 13, 14, 15]);
    assert.deepEqual(
      seqs(await log.sessionEvents('ses_a', { from: 600, limit: 1000 })),
      seqs(a.filter((e) => e.seq > 600)),
    );
    assert.deepEqual(
      seqs(await log.sessionEvents('ses_b')),
      seqs(model.filter((e) => e.session_id === 'ses_b')),
    );
    assert.deepEqual(await log.sessionEvents('ses_a', { from: 990 }), []);
    assert.deepEqual(await log.sessionEvents('ses_nobody'), []);
  });

  it('sessionEvents pages through a whole session by cursor', async () => {
    const got: number[] = [];
    let from = 0;
    for (;;) {
      const page = await log.sessionEvents('ses_a', { from, limit: 64 });
      if (page.length === 0) break;
      got.push(...seqs(page));
      from = page.at(-1)!.seq;
    }
    assert.deepEqual(got, seqs(model.filter((e) => e.session_id === 'ses_a')));
  });

  it('events: newest first, default limit 100', async () => {
    assert.equal(DEFAULT_EVENTS_LIMIT, 100);
    assert.deepEqual(seqs(await log.events()), seqs(newestFirst(model).slice(0, 100)));
    assert.deepEqual(seqs(await log.events({ limit: 3 })), [990, 989, 988]);
    assert.equal((await log.events({ limit: 100_000 })).length, 990);
  });

  it('events: by type, by zone, by time window (inclusive), before, and combined', async () => {
    const expect = (f: (e: LogEvent) => boolean, limit = 100) =>
      seqs(newestFirst(model.filter(f)).slice(0, limit));
    assert.deepEqual(
      seqs(await log.events({ type: 'task.created', limit: 1000 })),
      expect((e) => e.type === 'task.created', 1000),
    );
    assert.deepEqual(
      seqs(await log.events({ type: 'stream.attached' })),
      expect((e) => e.type === 'stream.attached'),
    );
    assert.deepEqual(
      seqs(await log.events({ zone: 'z2', limit: 1000 })),
      expect((e) => e.zone === 'z2', 1000),
    );
    assert.deepEqual(
      seqs(await log.events({ since: T0 + 2000, limit: 1000 })),
      expect((e) => e.ts >= T0 + 2000, 1000),
    );
    assert.deepEqual(
      seqs(await log.events({ until: T0 + 1000, limit: 1000 })),
      expect((e) => e.ts <= T0 + 1000, 1000),
    );
    assert.deepEqual(
      seqs(await log.events({ since: T0 + 1000, until: T0 + 2000, limit: 1000 })),
      expect((e) => e.ts >= T0 + 1000 && e.ts <= T0 + 2000, 1000),
    );
    assert.deepEqual(seqs(await log.events({ since: T0 + 1500, until: T0 + 1600 })), []);
    assert.deepEqual(seqs(await log.events({ before: 601, limit: 2 })), [600, 599]);
    assert.deepEqual(seqs(await log.events({ before: 1 })), []);
    assert.deepEqual(
      seqs(
        await log.events({ type: 'stream.message', zone: 'z1', since: T0 + 1000, before: 900, limit: 20 }),
      ),
      expect((e) => e.type === 'stream.message' && e.zone === 'z1' && e.ts >= T0 + 1000 && e.seq < 900, 20),
    );
  });

  it('events: paging backwards with `before` visits every event of a type once', async () => {
    const got: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await log.events({ type: 'stream.message', before, limit: 37 });
      if (page.length === 0) break;
      got.push(...seqs(page));
      before = page.at(-1)!.seq;
    }
    assert.deepEqual(got, seqs(newestFirst(model.filter((e) => e.type === 'stream.message'))));
  });

  it('transcript: only stream.message on that stream, newest first, default limit 100, before/limit', async () => {
    assert.equal(DEFAULT_TRANSCRIPT_LIMIT, 100);
    const x = newestFirst(model.filter((e) => e.stream_id === 'str_x' && e.type === 'stream.message'));
    assert.equal(x.length, 180);
    assert.deepEqual(seqs(await log.transcript('str_x')), seqs(x.slice(0, 100)));
    assert.deepEqual(seqs(await log.transcript('str_x', { limit: 500 })), seqs(x));
    assert.deepEqual(seqs(await log.transcript('str_x', { before: 700, limit: 3 })), [650, 649, 648]);
    const y = await log.transcript('str_y', { limit: 1000 });
    assert.deepEqual(
      seqs(y),
      seqs(newestFirst(model.filter((e) => e.stream_id === 'str_y' && e.type === 'stream.message'))),
    );
    assert.equal(y.length, 30);
    assert.ok(y.every((e) => e.type === 'stream.message' && e.stream_id === 'str_y'));
    assert.deepEqual(await log.transcript('str_none'), []);
  });

  it('tail: oldest first after the cursor, default limit 500, limit and zone', async () => {
    assert.deepEqual(seqs(await log.tail(0)), seqs(model.slice(0, 500)));
    assert.deepEqual(seqs(await log.tail(985)), [986, 987, 988, 989, 990]);
    assert.deepEqual(await log.tail(990), []);
    assert.deepEqual(seqs(await log.tail(100, { limit: 3 })), [101, 102, 103]);
    assert.deepEqual(
      seqs(await log.tail(0, { zone: 'z2', limit: 1000 })),
      seqs(model.filter((e) => e.zone === 'z2')),
    );
    // Replay by cursor reaches the head.
    const got: number[] = [];
    let after = 0;
    for (;;) {
      const page = await log.tail(after, { limit: 128 });
      if (page.length === 0) break;
      got.push(...seqs(page));
      after = page.at(-1)!.seq;
    }
    assert.deepEqual(got, seqs(model));
  });

  it('messagesAfter: a stream’s messages past an fd cursor, oldest first', async () => {
    const x = model.filter((e) => e.stream_id === 'str_x' && e.type === 'stream.message');
    assert.deepEqual(seqs(await log.messagesAfter('str_x', 0)), seqs(x));
    assert.deepEqual(seqs(await log.messagesAfter('str_x', 640, 5)), [641, 642, 643, 644, 645]);
    assert.deepEqual(seqs(await log.messagesAfter('str_x', 990)), []);
  });

  it('head: the last seq, 0 on an empty log', async () => {
    assert.equal(await log.head(), 990);
    const empty = await target.open();
    assert.equal(await empty.log.head(), 0);
    assert.deepEqual(await empty.log.tail(0), []);
    assert.deepEqual(await empty.log.events(), []);
  });
});
