import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, mock } from 'node:test';
import { type Running, serve } from '../../src/app/server.ts';
import type { ServeOptions } from '../../src/config/options.ts';
import {
  type HttpWarren,
  openSse,
  type SseEvent,
  SseParser,
  startHttp,
  withTimeout,
} from '../helpers/http.ts';
import { forEachWarren, idleScript, until, waitStatus } from '../helpers/warrens.ts';

const seqs = (events: SseEvent[]) => events.map((e) => Number(e.id));

/** Every event in the zone after `after`, from the log itself. */
async function logAfter(h: HttpWarren, after: number, zone = 'default'): Promise<number[]> {
  const out: number[] = [];
  let cursor = after;
  for (;;) {
    const page = await h.warren.store.log.tail(cursor, { limit: 1000, zone });
    out.push(...page.map((e) => e.seq));
    if (page.length < 1000) return out;
    cursor = page.at(-1)!.seq;
  }
}

forEachWarren('HTTP live events (SSE)', (t) => {
  it('?after=<seq> replays the log after the cursor, then follows commits live', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'live-room' })).json;
    const from = await h.head();
    for (let i = 0; i < 5; i++) await h.api('POST', `/v1/fds/${room.fd}/write`, { message: `old ${i}` });
    const replay = await logAfter(h, from);
    assert.equal(replay.length, 5);

    const live = h.live({ after: from });
    const opened = await live.opened;
    assert.equal(opened.status, 200);
    assert.match(opened.contentType ?? '', /^text\/event-stream/);
    const first = await live.waitForCount(5);
    assert.deepEqual(seqs(first), replay);
    for (const e of first) {
      assert.equal(e.event, 'stream.message');
      assert.equal(e.json.seq, Number(e.id));
      assert.equal(e.json.type, e.event);
      assert.equal(typeof e.json.id, 'string');
    }
    assert.deepEqual(
      first.map((e) => e.json.payload.text),
      ['old 0', 'old 1', 'old 2', 'old 3', 'old 4'],
    );
    assert.equal(live.retry, 1000);
    assert.ok(
      live.comments.some((c) => c.includes(`after seq ${from}`)),
      live.comments.join('|'),
    );

    // Live: what commits next arrives, in order, once.
    for (let i = 0; i < 5; i++) await h.api('POST', `/v1/fds/${room.fd}/write`, { message: `new ${i}` });
    const all = await live.waitForCount(10);
    assert.deepEqual(seqs(all), await logAfter(h, from));
    assert.deepEqual(
      all.slice(5).map((e) => e.json.payload.text),
      ['new 0', 'new 1', 'new 2', 'new 3', 'new 4'],
    );
    // Without a cursor it starts at the head: nothing old, only what comes next.
    const fresh = h.live();
    await fresh.opened;
    await fresh.waitForComment((c) => c.includes('after seq'));
    await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'latest' });
    const [only] = await fresh.waitForCount(1);
    assert.equal(only!.json.payload.text, 'latest');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(fresh.events.length, 1);
    live.close();
    fresh.close();
  });

  it('reconnecting with Last-Event-ID resumes with no gap and no duplicate, under concurrent writes', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'seam' })).json;
    const start = await h.head();
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        const r = await h.api('POST', `/v1/fds/${room.fd}/write`, { message: `m${written}` });
        assert.equal(r.status, 200);
        written++;
      }
    })();

    const got: SseEvent[] = [];
    let after = start;
    // Three connections; each is dropped mid-stream while writes continue.
    for (let round = 0; round < 3; round++) {
      const c = round === 0 ? h.live({ after }) : h.live({}, { lastEventId: after });
      await c.opened;
      await c.waitForCount(10, 20_000);
      c.close();
      await until(() => c.ended, 20_000, 'the client to end');
      got.push(...c.events);
      after = Number(c.events.at(-1)!.id);
      // Events keep committing while nobody is connected.
      const target = written + 5;
      await until(() => written >= target, 20_000, 'writes while disconnected');
    }
    writing = false;
    await writer;
    // The last connection catches up to the head and then sees the tail end.
    const last = h.live({}, { lastEventId: after });
    const head = await h.head();
    await last.waitFor((e) => Number(e.id) === head, 20_000);
    got.push(...last.events);
    last.close();

    const ids = seqs(got);
    assert.deepEqual(ids, [...new Set(ids)], 'no duplicates across the seams');
    assert.deepEqual(ids, await logAfter(h, start), 'no gaps: exactly the log after the start');
    assert.ok(ids.length >= written);
  });

  it('Last-Event-ID wins over ?after; a bad cursor is a typed 400', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'cursor' })).json;
    const a = (await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'a' })).json.seq;
    const b = (await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'b' })).json.seq;
    const c = h.live({ after: 0 }, { lastEventId: a });
    const [first] = await c.waitForCount(1);
    assert.equal(Number(first!.id), b);
    c.close();
    for (const bad of ['-1', 'abc', '1.5']) {
      const r = await h.api('GET', `/v1/events/live?after=${bad}`);
      assert.equal(r.status, 400, bad);
      assert.equal(r.json.error.code, 'invalid_input');
    }
  });

  it('filters by type, session and stream, and never crosses zones', async () => {
    const h = await startHttp(t);
    const from = await h.head();
    const byType = h.live({ after: from, type: 'stream.message' });
    const room = (await h.api('POST', '/v1/streams', { name: 'filtered' })).json;
    const spawned = (await h.api('POST', '/v1/sessions', { script: idleScript, title: 'watched' })).json;
    const id: string = spawned.session.id;
    await waitStatus(h.warren, id, 'idle');
    const bySession = h.live({ after: from, session: id });
    const byStream = h.live({ after: from, stream: room.stream.id });
    // Another zone's traffic must not leak into this zone's stream.
    const other = await h.api(
      'POST',
      '/v1/streams',
      { name: 'elsewhere' },
      { headers: { 'x-warren-zone': 'other' } },
    );
    assert.equal(other.status, 200, JSON.stringify(other.json));
    await h.api(
      'POST',
      `/v1/fds/${other.json.fd}/write`,
      { message: 'other zone' },
      { headers: { 'x-warren-zone': 'other' } },
    );
    await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'one' });
    await h.api('POST', `/v1/sessions/${id}/send`, { text: 'two' });
    await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'three' });
    // Let the agent take its input, so the log stands still while we compare.
    await until(async () => {
      const evs = await h.warren.store.log.sessionEvents(id, { from, limit: 10_000 });
      return evs.some((e) => e.type === 'session.input') && evs.at(-1)?.type === 'session.status';
    });
    await waitStatus(h.warren, id, 'idle');
    await h.warren.store.writer.drained();
    const everything = h.live({ after: from });

    const msgs = await byType.waitForCount(3);
    await new Promise((r) => setTimeout(r, 100));
    for (const e of byType.events) assert.equal(e.event, 'stream.message');
    assert.deepEqual(
      byType.events.map((e) => e.json.payload.text),
      ['one', 'two', 'three'],
    );
    assert.equal(msgs.length, 3);

    const expectSession = (await h.warren.store.log.tail(from, { limit: 10_000 }))
      .filter((e) => e.session_id === id)
      .map((e) => e.seq);
    assert.ok(expectSession.length >= 3);
    await bySession.waitForCount(expectSession.length);
    assert.deepEqual(seqs(bySession.events), expectSession);
    for (const e of bySession.events) assert.equal(e.json.session_id, id);

    const expectStream = (await h.warren.store.log.tail(from, { limit: 10_000 }))
      .filter((e) => e.stream_id === room.stream.id)
      .map((e) => e.seq);
    await byStream.waitForCount(expectStream.length);
    assert.deepEqual(seqs(byStream.events), expectStream);

    // The unfiltered stream is exactly this zone's log.
    await everything.waitForCount((await logAfter(h, from)).length);
    assert.deepEqual(seqs(everything.events), await logAfter(h, from));
    for (const c of [byType, bySession, byStream, everything]) {
      for (const e of c.events) assert.equal(e.json.zone, 'default');
      assert.ok(!c.events.some((e) => e.json.payload?.text === 'other zone'));
    }
    // The other zone's operator sees its own traffic, and only that.
    const otherLive = openSse(`${h.url}/v1/events/live?after=${from}&type=stream.message`, {
      auth: h.key,
      headers: { 'x-warren-zone': 'other' },
    });
    const [theirs] = await otherLive.waitForCount(1);
    assert.equal(theirs!.json.payload.text, 'other zone');
    assert.equal(theirs!.json.zone, 'other');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(otherLive.events.length, 1);
    otherLive.close();
    for (const c of [byType, bySession, byStream, everything]) c.close();
  });

  it('the stream stops cleanly when the client goes away (no writes to a dead socket)', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'gone' })).json;
    for (let round = 0; round < 5; round++) {
      const c = h.live();
      await c.opened;
      c.close();
      await until(() => c.ended, 20_000, 'client end');
    }
    // Writes after the clients left still succeed and nothing is leaked to them.
    for (let i = 0; i < 10; i++) {
      const r = await h.api('POST', `/v1/fds/${room.fd}/write`, { message: `after ${i}` });
      assert.equal(r.status, 200);
    }
  });
});

/** A server of its own (the in-process one, in a fresh data dir): stopped and removed after `fn`. */
async function withOwnServer(
  kernel: ServeOptions['kernel'],
  fn: (running: Running, key: string) => Promise<void>,
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-live-'));
  const running = await serve(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      durability: 'process',
      demo: false,
      ...(kernel ? { kernel } : {}),
    },
    { write: () => {} },
  );
  try {
    await fn(running, readFileSync(join(dataDir, 'operator.key'), 'utf8').trim());
  } finally {
    await withTimeout(running.stop(), 10_000, 'stopping the server');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A promise and the function that settles it: a point another part of the test waits for. */
function signal(): { reached: Promise<void>; reach: () => void } {
  let reach!: () => void;
  const reached = new Promise<void>((r) => {
    reach = r;
  });
  return { reached, reach };
}

/** A grace far past the tests' bounds: a close held open shows as a stop that does not finish, not one the grace cut short. */
const LONG_GRACE = { shutdownGraceMs: 120_000 };

describe('HTTP live events: heartbeats', () => {
  it('heartbeat comments between events do not break parsing', async (t) => {
    // Only the heartbeat uses setInterval; mock it so the test does not wait 15 s.
    mock.timers.enable({ apis: ['setInterval'] });
    t.after(() => mock.timers.reset());
    await withOwnServer(undefined, async (running, key) => {
      const api = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(running.url + path, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body ?? {}),
        });
        return (await res.json()) as { fd: number };
      };
      const room = await api('POST', '/v1/streams', { name: 'beat' });
      const live = openSse(`${running.url}/v1/events/live`, { auth: key });
      await live.opened;
      await live.waitForComment((c) => c.includes('after seq'));
      await api('POST', `/v1/fds/${room.fd}/write`, { message: 'before the beat' });
      await live.waitForCount(1);
      for (let i = 0; i < 3; i++) {
        mock.timers.tick(15_000);
        await live.waitForComment((c) => c === 'keep-alive');
        await api('POST', `/v1/fds/${room.fd}/write`, { message: `after beat ${i}` });
        await live.waitForCount(2 + i);
      }
      assert.equal(live.comments.filter((c) => c === 'keep-alive').length, 3);
      assert.deepEqual(
        live.events.map((e) => e.json.payload.text),
        ['before the beat', 'after beat 0', 'after beat 1', 'after beat 2'],
      );
      for (const e of live.events) assert.equal(e.event, 'stream.message');
      live.close();
    });
  });

  it('server shutdown ends connected live clients instead of hanging on them', async () => {
    await withOwnServer(undefined, async (running, key) => {
      const clients = [1, 2].map(() => openSse(`${running.url}/v1/events/live?after=0`, { auth: key }));
      for (const c of clients) await c.waitForCount(1);
      await withTimeout(running.stop(), 5000, 'stop() with live clients connected');
      await until(() => clients.every((c) => c.ended), 20_000, 'the clients to see the end');
    });
  });

  it('a live stream whose request was under way when the close began is ended, not left holding it', async () => {
    await withOwnServer(LONG_GRACE, async (running, key) => {
      // The stream pins "now" to the log's head before it registers: hold it there while the
      // close begins (on PostgreSQL that read is a round trip, and a browser hits the gap).
      const kernel = running.warren.kernel;
      const realHead = kernel.logHead.bind(kernel);
      const inHead = signal();
      const gate = signal();
      kernel.logHead = async () => {
        inHead.reach();
        await gate.reached;
        return realHead();
      };
      const client = openSse(`${running.url}/v1/events/live`, { auth: key });
      await inHead.reached;
      const stopped = running.stop();
      // The server has stopped listening once its close hooks ran: the stream registers after.
      await until(() => !running.http.server.listening, 5000, 'the close to begin');
      gate.reach();
      await withTimeout(stopped, 10_000, 'stop() with a live stream opened during the close');
      await until(() => client.ended, 5000, 'the client to see the end');
    });
  });

  it('shutdown does not wait on a keep-alive connection whose request ended after the close began', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await withOwnServer(LONG_GRACE, async (running, key) => {
        const post = (path: string, body: unknown) =>
          new Promise<{ status: number; body: string; socket: Socket }>((resolve, reject) => {
            const req = request(`${running.url}${path}`, {
              method: 'POST',
              agent,
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            });
            req.on('response', (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => {
                body += c;
              });
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, body, socket: req.socket as Socket }),
              );
            });
            req.on('error', reject);
            req.end(JSON.stringify(body));
          });
        const room = await post('/v1/streams', { name: 'closing-room' });
        assert.equal(room.status, 200, room.body);
        const { fd } = JSON.parse(room.body) as { fd: number };
        // The read is under way in the server (entered its handler) before the close begins.
        const kernel = running.warren.kernel;
        const realRead = kernel.read.bind(kernel);
        const reading = signal();
        kernel.read = (...args: Parameters<typeof realRead>) => {
          reading.reach();
          return realRead(...args);
        };
        const read = post(`/v1/fds/${fd}/read`, { wait: true, waitMs: 300 });
        await reading.reached;
        const stopped = running.stop();
        const answered = await read;
        assert.equal(answered.status, 200, 'the read begun before the close is answered');
        assert.equal(answered.socket, room.socket, 'on the kept-alive connection');
        await withTimeout(stopped, 10_000, 'stop() with an idle kept-alive connection');
        await until(() => answered.socket.destroyed, 5000, 'the server to close the idle connection');
      });
    } finally {
      agent.destroy();
    }
  });
});

describe('the test SSE parser', () => {
  it('handles fields, multi-line data, comments, CRLF and chunks split anywhere', () => {
    const wire =
      'retry: 1000\r\n: hello\r\n\r\nid: 7\nevent: a.b\ndata: {"x":\ndata: 1}\n\n: keep-alive\n\nid: 8\r\ndata:{"y":2}\r\n\r\n' +
      'data: not json\n\n';
    for (const size of [1, 2, 3, 7, wire.length]) {
      const got: SseEvent[] = [];
      const comments: string[] = [];
      let retry = 0;
      const p = new SseParser(
        (e) => got.push(e),
        (c) => comments.push(c),
        (r) => {
          retry = r;
        },
      );
      for (let i = 0; i < wire.length; i += size) p.push(wire.slice(i, i + size));
      assert.equal(retry, 1000);
      assert.deepEqual(comments, ['hello', 'keep-alive']);
      assert.equal(got.length, 3, `chunk size ${size}`);
      assert.deepEqual(got[0], { id: '7', event: 'a.b', data: '{"x":\n1}', json: { x: 1 } });
      assert.deepEqual(got[1], { id: '8', data: '{"y":2}', json: { y: 2 } });
      assert.equal(got[2]!.json, undefined);
    }
  });
});
