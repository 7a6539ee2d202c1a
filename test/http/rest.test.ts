import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { LogEvent } from '../../src/store/events.ts';
import { startHttp } from '../helpers/http.ts';
import { forEachWarren, idleScript, until, waitStatus } from '../helpers/warrens.ts';

type Ev = LogEvent;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const iso = (ms: number) => new Date(ms).toISOString();
const isDesc = (xs: number[]) => xs.every((x, i) => i === 0 || xs[i - 1]! > x);
const isAsc = (xs: number[]) => xs.every((x, i) => i === 0 || xs[i - 1]! < x);

const SESSION_KEYS = [
  'activity',
  'budget',
  'createdAt',
  'depth',
  'endDetail',
  'endReason',
  'endedAt',
  'id',
  'lastMessage',
  'maxTurns',
  'model',
  'parentClose',
  'parentId',
  'persona',
  'runner',
  'runtime',
  'status',
  'subtreeUsage',
  'suspendReason',
  'title',
  'tools',
  'turns',
  'updatedAt',
  'usage',
  'zone',
];

forEachWarren('HTTP REST shapes', (t) => {
  it('GET /v1/sessions (and ?all=true), GET /v1/sessions/:id', async () => {
    const h = await startHttp(t);
    const a = (await h.api('POST', '/v1/sessions', { script: idleScript, title: 'alpha', pipe: 'sync' }))
      .json;
    assert.deepEqual(Object.keys(a).sort(), ['created', 'lifecycleFd', 'pipeFd', 'session']);
    assert.equal(a.created, true);
    const b = (await h.api('POST', '/v1/sessions', { script: idleScript, title: 'beta' })).json;
    await waitStatus(h.warren, a.session.id, 'idle');
    await waitStatus(h.warren, b.session.id, 'idle');

    const r = await h.api('GET', '/v1/sessions');
    assert.equal(r.status, 200);
    const sessions = r.json.sessions as Array<Record<string, unknown>>;
    for (const s of sessions) assert.deepEqual(Object.keys(s).sort(), SESSION_KEYS);
    const init = sessions.find((s) => s.depth === 0)!;
    assert.equal(init.status, 'running');
    assert.equal(init.parentId, null);
    const alpha = sessions.find((s) => s.id === a.session.id)!;
    assert.equal(alpha.title, 'alpha');
    assert.equal(alpha.status, 'idle');
    assert.equal(alpha.parentId, init.id);
    assert.equal(alpha.depth, 1);
    assert.equal(alpha.runtime, 'script');
    assert.equal(alpha.zone, 'default');
    assert.equal(typeof alpha.createdAt, 'number');
    // Oldest first.
    const ids = sessions.map((s) => s.id);
    assert.ok(ids.indexOf(a.session.id) < ids.indexOf(b.session.id));

    await h.api('POST', `/v1/sessions/${b.session.id}/kill`, {});
    await waitStatus(h.warren, b.session.id, 'stopped');
    const live = (await h.api('GET', '/v1/sessions')).json.sessions.map((s: { id: string }) => s.id);
    assert.ok(!live.includes(b.session.id));
    const all = (await h.api('GET', '/v1/sessions?all=true')).json.sessions;
    const beta = all.find((s: { id: string }) => s.id === b.session.id);
    assert.equal(beta.status, 'stopped');
    assert.equal(beta.endReason, 'killed');
    assert.equal(typeof beta.endedAt, 'number');
    // all=false is the default; the boolean parses from the query string both ways.
    assert.equal((await h.api('GET', '/v1/sessions?all=false')).json.sessions.length, live.length);

    const one = await h.api('GET', `/v1/sessions/${a.session.id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(Object.keys(one.json), ['session']);
    // The detail also says how the session is contained; listings leave that out.
    assert.deepEqual(Object.keys(one.json.session).sort(), [...SESSION_KEYS, 'containment'].sort());
    assert.equal(one.json.session.id, a.session.id);
  });

  it('GET /v1/sessions/:id/events?from=&limit= : oldest first, from is exclusive', async () => {
    const h = await startHttp(t);
    const a = (
      await h.api('POST', '/v1/sessions', { script: { steps: [{ listen: { say: 'heard ${input.text}' } }] } })
    ).json.session.id;
    await waitStatus(h.warren, a, 'idle');
    for (let i = 0; i < 4; i++) {
      await h.api('POST', `/v1/sessions/${a}/send`, { text: `hello ${i}` });
    }
    // Let the agent hear all four, so the log stands still while we read it.
    await until(async () => {
      const s = (await h.api('GET', `/v1/sessions/${a}`)).json.session;
      return s.status === 'idle' && s.lastMessage?.endsWith('hello 3');
    });
    await h.warren.store.writer.drained();
    const expected = await h.warren.store.log.sessionEvents(a, { limit: 10_000 });
    const r = await h.api('GET', `/v1/sessions/${a}/events`);
    assert.equal(r.status, 200);
    const events = r.json.events as Ev[];
    assert.deepEqual(
      events.map((e) => e.seq),
      expected.map((e) => e.seq),
    );
    assert.ok(isAsc(events.map((e) => e.seq)));
    for (const e of events) {
      assert.deepEqual(Object.keys(e).sort(), [
        'actor',
        'id',
        'payload',
        'seq',
        'session_id',
        'stream_id',
        'ts',
        'type',
        'zone',
      ]);
      assert.equal(e.session_id, a);
    }
    assert.ok(
      events.some((e) => e.type === 'session.spawned'),
      events.map((e) => e.type).join(','),
    );
    // from= is a cursor: strictly after it. limit= caps.
    const mid = events[2]!.seq;
    const after = (await h.api('GET', `/v1/sessions/${a}/events?from=${mid}`)).json.events as Ev[];
    assert.deepEqual(
      after.map((e) => e.seq),
      events.filter((e) => e.seq > mid).map((e) => e.seq),
    );
    const two = (await h.api('GET', `/v1/sessions/${a}/events?from=${mid}&limit=2`)).json.events as Ev[];
    assert.deepEqual(
      two.map((e) => e.seq),
      after.slice(0, 2).map((e) => e.seq),
    );
    // Paging by cursor walks the whole log once.
    const paged: number[] = [];
    let from = 0;
    for (;;) {
      const page = (await h.api('GET', `/v1/sessions/${a}/events?from=${from}&limit=3`)).json.events as Ev[];
      if (page.length === 0) break;
      paged.push(...page.map((e) => e.seq));
      from = page.at(-1)!.seq;
    }
    assert.deepEqual(
      paged,
      events.map((e) => e.seq),
    );
  });

  it('GET /v1/events?after=&limit= : a cursor, oldest first, walks the log once', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'after-room' })).json;
    for (let i = 0; i < 5; i++) await h.api('POST', `/v1/fds/${room.fd}/write`, { message: `a${i}` });
    await h.warren.store.writer.drained();
    const all = ((await h.api('GET', '/v1/events?limit=10000')).json.events as Ev[])
      .map((e) => e.seq)
      .reverse();
    const walked: number[] = [];
    let after = 0;
    for (;;) {
      const page = (await h.api('GET', `/v1/events?after=${after}&limit=4`)).json.events as Ev[];
      if (page.length === 0) break;
      assert.ok(isAsc(page.map((e) => e.seq)), 'oldest first after a cursor');
      walked.push(...page.map((e) => e.seq));
      after = page.at(-1)!.seq;
    }
    assert.deepEqual(walked, all);
  });

  it('GET /v1/events?type=&since=&until=&before=&limit= : most recent first, ISO times', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'ev-room' })).json;
    for (let i = 0; i < 6; i++) {
      await sleep(15);
      await h.api('POST', `/v1/fds/${room.fd}/write`, { message: `m${i}` });
    }
    await sleep(15);
    const all = await h.warren.store.log.events({ zone: 'default', limit: 10_000 });

    const recent = (await h.api('GET', '/v1/events')).json.events as Ev[];
    assert.ok(isDesc(recent.map((e) => e.seq)));
    assert.deepEqual(
      recent.map((e) => e.seq),
      all.slice(0, 100).map((e) => e.seq),
    );

    const msgs = (await h.api('GET', '/v1/events?type=stream.message')).json.events as Ev[];
    assert.equal(msgs.length, 6);
    assert.deepEqual(
      msgs.map((e) => e.payload.text),
      ['m5', 'm4', 'm3', 'm2', 'm1', 'm0'],
    );
    for (const e of msgs) assert.equal(e.stream_id, room.stream.id);

    // A time window, in ISO 8601: since and until are inclusive.
    const lo = msgs[4]!.ts; // m1
    const hi = msgs[1]!.ts; // m4
    const window = (
      await h.api(
        'GET',
        `/v1/events?type=stream.message&since=${encodeURIComponent(iso(lo))}&until=${encodeURIComponent(iso(hi))}`,
      )
    ).json.events as Ev[];
    assert.deepEqual(
      window.map((e) => e.payload.text),
      ['m4', 'm3', 'm2', 'm1'],
    );
    // Epoch milliseconds are accepted too.
    const sinceMs = (await h.api('GET', `/v1/events?type=stream.message&since=${msgs[0]!.ts}`)).json.events;
    assert.deepEqual(
      sinceMs.map((e: Ev) => e.payload.text),
      ['m5'],
    );
    // A window in the future is empty, not an error.
    const future = await h.api('GET', `/v1/events?since=${encodeURIComponent(iso(Date.now() + 3_600_000))}`);
    assert.equal(future.status, 200);
    assert.deepEqual(future.json.events, []);

    // before= pages into history; limit= caps the page.
    const page = (await h.api('GET', `/v1/events?before=${msgs[2]!.seq}&limit=2`)).json.events as Ev[];
    assert.deepEqual(
      page.map((e) => e.seq),
      all
        .filter((e) => e.seq < msgs[2]!.seq)
        .slice(0, 2)
        .map((e) => e.seq),
    );
    const walked: number[] = [];
    let before: number | undefined;
    for (;;) {
      const q = `/v1/events?limit=4${before !== undefined ? `&before=${before}` : ''}`;
      const p = (await h.api('GET', q)).json.events as Ev[];
      if (p.length === 0) break;
      walked.push(...p.map((e) => e.seq));
      before = p.at(-1)!.seq;
    }
    assert.deepEqual(
      walked,
      all.map((e) => e.seq),
    );
  });

  it('GET /v1/streams (?internal=true) with subscribers and buffer depth', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'shape-room', selfEcho: true })).json;
    const a = (await h.api('POST', '/v1/sessions', { script: idleScript, title: 'sub' })).json;
    const id: string = a.session.id;
    await waitStatus(h.warren, id, 'idle');
    await h.api('POST', '/v1/streams/shape-room/attach', { session: id, permission: 'r', mode: 'detach' });
    await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'one' });
    await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'two' });

    const named = (await h.api('GET', '/v1/streams')).json.streams;
    assert.equal(named.length, 1);
    const s = named[0];
    assert.deepEqual(Object.keys(s).sort(), [
      'bufferDepth',
      'closedAt',
      'createdAt',
      'id',
      'kind',
      'name',
      'owner',
      'selfEcho',
      'sessionId',
      'subscribers',
      'zone',
    ]);
    assert.equal(s.name, 'shape-room');
    assert.equal(s.kind, 'named');
    assert.equal(s.owner, 'operator:admin');
    assert.equal(s.selfEcho, true);
    assert.equal(s.closedAt, null);
    assert.equal(s.subscribers.length, 2);
    const holders = s.subscribers.map((f: { holder: string }) => f.holder).sort();
    assert.deepEqual(holders, [id, 'operator:admin'].sort());
    const sub = s.subscribers.find((f: { holder: string }) => f.holder === id);
    assert.deepEqual(Object.keys(sub).sort(), [
      'cursor',
      'deliveryMode',
      'fd',
      'holder',
      'id',
      'owned',
      'pending',
      'permission',
      'spawned',
      'streamId',
      'streamName',
    ]);
    assert.equal(sub.permission, 'r');
    assert.equal(sub.deliveryMode, 'detach');
    assert.equal(sub.pending, 2);
    assert.equal(s.bufferDepth, 2);

    const internal = (await h.api('GET', '/v1/streams?internal=true')).json.streams as Array<{
      name: string;
      kind: string;
      sessionId: string | null;
      subscribers: Array<{ holder: string; spawned: boolean; owned: boolean }>;
    }>;
    const kinds = Object.fromEntries(internal.map((x) => [x.name, x.kind]));
    assert.equal(kinds['shape-room'], 'named');
    assert.equal(kinds[`lifecycle:${id}`], 'lifecycle');
    assert.equal(kinds[`stdin:${id}`], 'stdin');
    assert.equal(kinds[`pipe:${id}`], 'pipe');
    const lifecycle = internal.find((x) => x.name === `lifecycle:${id}`)!;
    assert.equal(lifecycle.sessionId, id);
    // The spawner's end is owned; the child's end is marked spawned.
    assert.ok(lifecycle.subscribers.some((f) => f.holder !== id && f.owned));
    assert.ok(lifecycle.subscribers.some((f) => f.holder === id && f.spawned));
    // internal=false is the default.
    assert.equal((await h.api('GET', '/v1/streams?internal=false')).json.streams.length, 1);
  });

  it('GET /v1/streams/:stream/transcript?before=&limit= : most recent first, by name or id', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'tx-room' })).json;
    const seqs: number[] = [];
    for (let i = 0; i < 7; i++) {
      seqs.push(
        (await h.api('POST', `/v1/fds/${room.fd}/write`, { message: `line ${i}`, data: { i } })).json.seq,
      );
    }
    const r = await h.api('GET', '/v1/streams/tx-room/transcript');
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.json).sort(), ['messages', 'stream']);
    assert.equal(r.json.stream.id, room.stream.id);
    const msgs = r.json.messages as Array<Record<string, unknown>>;
    assert.deepEqual(
      msgs.map((m) => m.seq),
      [...seqs].reverse(),
    );
    assert.deepEqual(Object.keys(msgs[0]!).sort(), [
      'data',
      'from',
      'id',
      'kind',
      'seq',
      'streamId',
      'text',
      'ts',
    ]);
    assert.equal(msgs[0]!.text, 'line 6');
    assert.deepEqual(msgs[0]!.data, { i: 6 });
    assert.equal(msgs[0]!.from, 'operator:admin');
    assert.equal(msgs[0]!.kind, 'message');
    // By id, the same.
    const byId = (await h.api('GET', `/v1/streams/${room.stream.id}/transcript`)).json.messages;
    assert.deepEqual(byId, msgs);
    // before= and limit=.
    const page = (await h.api('GET', `/v1/streams/tx-room/transcript?before=${seqs[4]}&limit=2`)).json
      .messages;
    assert.deepEqual(
      page.map((m: { text: string }) => m.text),
      ['line 3', 'line 2'],
    );
    const walked: string[] = [];
    let before: number | undefined;
    for (;;) {
      const q = `/v1/streams/tx-room/transcript?limit=3${before !== undefined ? `&before=${before}` : ''}`;
      const p = (await h.api('GET', q)).json.messages as Array<{ seq: number; text: string }>;
      if (p.length === 0) break;
      walked.push(...p.map((m) => m.text));
      before = p.at(-1)!.seq;
    }
    assert.deepEqual(
      walked,
      Array.from({ length: 7 }, (_, i) => `line ${6 - i}`),
    );
    // A closed room's transcript is still readable: the log keeps it.
    assert.equal((await h.api('DELETE', '/v1/streams/tx-room')).status, 200);
    const afterClose = await h.api('GET', `/v1/streams/${room.stream.id}/transcript`);
    assert.equal(afterClose.status, 200);
    assert.equal(afterClose.json.messages.length, 7);
    assert.equal(typeof afterClose.json.stream.closedAt, 'number');
  });
});
