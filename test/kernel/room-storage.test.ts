/**
 * A message written to a room is stored once, whatever the number of listeners (issue 25):
 * each listener's `session.input` names the messages it took instead of copying them, and every
 * read of the log still shows the input's text.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordInput, withInputText } from '../../src/kernel/input-record.ts';
import type { LogEvent } from '../../src/store/events.ts';
import { parseJson } from '../../src/util/json.ts';
import { call, forEachWarren, op } from '../helpers/warrens.ts';
import { allTaken, roomGrowth, roomWithListeners } from './room-fanout.ts';

describe('room storage on a real SQLite file', () => {
  it('20 listeners × 20 messages of 256 KiB grow the database by at most 1.5× the payload', async () => {
    const g = await roomGrowth({ listeners: 20, messages: 20, kib: 256 });
    assert.ok(
      g.ratio <= 1.5,
      `grew ${(g.growthBytes / 2 ** 20).toFixed(1)} MiB for ${(g.payloadBytes / 2 ** 20).toFixed(1)} MiB of messages (${g.ratio.toFixed(2)}×)`,
    );
  });
});

forEachWarren('room storage: readers see the text', (t) => {
  it('the input is stored as references; session_events, events and the live log show its text', async () => {
    const w = await t.open();
    const run = await roomWithListeners(w, 3, 'standup');
    const [a] = run.listeners as [string];
    const live = w.kernel.follow(op, { type: 'session.input', session: a }, await w.kernel.logHead());
    const body = `${'long message '.repeat(2000)}end`;
    const { seq } = await call(w, 'ipc_write', { fd: run.fd, message: body });
    const { seq: seq2 } = await call(w, 'ipc_write', { fd: run.fd, message: 'second' });
    await allTaken(run, [seq, seq2], 20_000);

    // Stored: the message once, each input a reference to it.
    const rows = await w.store.reader
      .selectFrom('events')
      .select(['type', 'payload'])
      .where('type', 'in', ['stream.message', 'session.input'])
      .execute();
    const big = rows.filter((r) => String(r.payload).includes('long message long message'));
    assert.deepEqual(
      big.map((r) => r.type),
      ['stream.message'],
      'the text is in the log once',
    );
    const stored = rows
      .filter((r) => r.type === 'session.input')
      .map((r) => parseJson<Record<string, unknown>>(r.payload, {}));
    assert.ok(stored.length >= 3);
    for (const p of stored) assert.equal(p.text, undefined);

    // Read back: the text as the agent was handed it.
    const fdOf = (await call(w, 'streams_attachments', { session: a })).fds[0].fd as number;
    const expected = (s: number, text: string) =>
      `[message fd=${fdOf} stream=standup from=operator:admin seq=${s}] ${text}`;
    const texts = (evs: Array<{ type: string; payload: Record<string, unknown> }>) =>
      evs.filter((e) => e.type === 'session.input').flatMap((e) => String(e.payload.text).split('\n'));
    const own = (await call(w, 'session_events', { id: a, limit: 500 })).events;
    assert.deepEqual(texts(own).sort(), [expected(seq, body), expected(seq2, 'second')].sort());
    const typed = (await call(w, 'events', { type: 'session.input', limit: 100 })).events.filter(
      (e: { session_id?: string; sessionId?: string }) => (e.session_id ?? e.sessionId) === a,
    );
    assert.deepEqual(texts(typed).sort(), [expected(seq, body), expected(seq2, 'second')].sort());
    const seen: string[] = [];
    for await (const e of live) {
      seen.push(...String(e.payload.text).split('\n'));
      if (seen.length >= 2) break;
    }
    assert.deepEqual(seen.sort(), [expected(seq, body), expected(seq2, 'second')].sort());
  });
});

describe('input records', () => {
  const handed = new Map([
    [10, 3],
    [11, 4],
  ]);
  const lookup = (seq: number) => handed.get(seq);

  it('name what the kernel handed over, and keep as given anything else (forged fds dropped)', () => {
    assert.deepEqual(recordInput({ text: 'x', seqs: [10, 11] }, lookup), { seqs: [10, 11], fds: [3, 4] });
    // A seq the session was not handed: stored with its text, never as a reference.
    assert.deepEqual(recordInput({ text: 'x', seqs: [10, 99], fds: [0, 0] }, lookup), {
      text: 'x',
      seqs: [10, 99],
    });
    assert.deepEqual(recordInput({ seqs: [99], fds: [0] }, lookup), { seqs: [99], text: '' });
  });

  it('an input stored with its text is read as stored', async () => {
    const e: LogEvent = {
      seq: 5,
      id: 'x',
      zone: 'default',
      ts: 0,
      type: 'session.input',
      actor: 'ses_a',
      session_id: 'ses_a',
      stream_id: null,
      payload: { text: 'as given', seqs: [1] },
    };
    // No database is asked: nothing in the page names its messages.
    assert.deepEqual(await withInputText(null as never, [e]), [e]);
  });
});
