import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LATEST_PROTOCOL_VERSION,
  McpError,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { serve } from '../../src/app/server.ts';
import { coreResources, LIST_PAGE, MAX_READ_BYTES } from '../../src/plugins/core/resources.ts';
import type { LogEvent } from '../../src/store/events.ts';
import { SubscriptionHub } from '../../src/surfaces/mcp/subscription-hub.ts';
import { Subscriptions } from '../../src/surfaces/mcp/subscriptions.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { startHttp } from '../helpers/http.ts';
import { mcpClients, SocketClientTransport } from '../helpers/mcp.ts';
import { WARREN_BIN } from '../helpers/server.ts';
import { call, forEachWarren, idleScript, until } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: resource contents are checked by the assertions that read them
type Any = any;

/** A resource's JSON content. */
async function readJson(c: Client, uri: string): Promise<Any> {
  const r = await c.readResource({ uri });
  assert.equal(r.contents.length, 1);
  const content = r.contents[0] as { uri: string; mimeType?: string; text: string };
  assert.equal(content.uri, uri);
  assert.equal(content.mimeType, 'application/json');
  return JSON.parse(content.text);
}

/** Every resource URI the caller is listed, following the cursor. */
async function allUris(c: Client): Promise<{ uris: string[]; pages: number }> {
  const uris: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await c.listResources(cursor ? { cursor } : {});
    pages++;
    for (const r of page.resources) {
      assert.ok(r.name, `${r.uri} has a name`);
      uris.push(r.uri);
    }
    cursor = page.nextCursor;
  } while (cursor);
  return { uris, pages };
}

const rejectsWith = async (p: Promise<unknown>, code: number, data: Record<string, unknown>) => {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof McpError, String(e));
    assert.equal(e.code, code);
    for (const [k, v] of Object.entries(data)) assert.equal((e.data as Any)?.[k], v, k);
    return true;
  });
};

/** This node's commit listeners and every node's (`onAnyCommit`, which MCP subscriptions use). */
const commitListeners = (w: Warren) => {
  const writer = w.store.writer as unknown as { listeners: Set<unknown>; anyListeners: Set<unknown> };
  return writer.listeners.size + writer.anyListeners.size;
};

/** A client that records `notifications/resources/updated`. */
function recordUpdates(c: Client): string[] {
  const seen: string[] = [];
  c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    seen.push(n.params.uri);
  });
  return seen;
}

const settle = (ms = 300) => new Promise((r) => setTimeout(r, ms));

/**
 * Notifications outside a request travel on the client's GET stream, which the SDK opens
 * just after initialize, without waiting: one sent before it is up is lost (Streamable HTTP
 * keeps no backlog). Wait until it carries one, then forget what arrived.
 */
async function notificationsFlow(c: Client, seen: string[], poke: () => Promise<unknown>): Promise<void> {
  await c.subscribeResource({ uri: 'warren://events' });
  await until(
    async () => {
      await poke();
      await settle(100);
      return seen.includes('warren://events');
    },
    10_000,
    'the notification stream',
  );
  await c.unsubscribeResource({ uri: 'warren://events' });
  await settle();
  seen.length = 0;
}

/**
 * Resources and subscriptions through the official SDK client on a real HTTP server. On both
 * backends: listing a session's subtree is a recursive query and prefix ranges are compared
 * by each database's own collation.
 */
forEachWarren('MCP resources', (t) => {
  const { connect, closeAll } = mcpClients();

  it('negotiates the newest protocol revision the SDK supports', async () => {
    const h = await startHttp(t);
    try {
      const c = await connect(h, h.key);
      assert.equal((c.transport as StreamableHTTPClientTransport).protocolVersion, LATEST_PROTOCOL_VERSION);
      const caps = c.getServerCapabilities();
      assert.deepEqual(caps?.resources, { subscribe: true, listChanged: false });
      assert.ok(caps?.prompts && caps.completions);
    } finally {
      await closeAll();
    }
  });

  it('an operator lists its zone (log, sessions, streams), paged; templates are listed', async () => {
    const h = await startHttp(t, {
      kernel: { limits: { maxDepth: 10, maxChildren: 200, maxSessionsPerZone: 200 } },
    });
    try {
      const w = h.warren;
      const spawned: string[] = [];
      for (let i = 0; i < LIST_PAGE + 5; i++)
        spawned.push((await call(w, 'ipc_spawn', { script: idleScript, title: `s${i}` })).session.id);
      await call(w, 'streams_create', { name: 'news room' });
      // Another zone's rows are not listed.
      const other = { kind: 'operator' as const, name: 'admin', zone: 'team-b' };
      await w.call(other, 'streams_create', { name: 'b-room' });

      const c = await connect(h, h.key);
      const { uris, pages } = await allUris(c);
      assert.ok(pages >= 2, `paged (${pages} pages)`);
      assert.equal(new Set(uris).size, uris.length, 'no resource twice');
      assert.equal(uris[0], 'warren://events');
      for (const id of [...spawned, 'init']) assert.ok(uris.includes(`warren://sessions/${id}`), id);
      assert.ok(uris.includes('warren://streams/news%20room/transcript'));
      assert.ok(uris.includes(`warren://streams/${encodeURIComponent(`pipe:${spawned[0]}`)}/transcript`));
      assert.ok(!uris.some((u) => u.includes('b-room')), 'another zone stays out');
      await rejectsWith(c.listResources({ cursor: 'not-a-cursor' }), -32602, {});

      const templates = (await c.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate);
      assert.deepEqual(templates, [
        'warren://events{?after,limit}',
        'warren://sessions/{id}',
        'warren://sessions/{id}/events{?after,limit}',
        'warren://streams/{name}/transcript{?before,limit}',
      ]);
      // The kernel listing itself keeps zones apart.
      const theirs = await w.kernel.listSessions(other, {});
      assert.ok(theirs.every((s) => s.zone === 'team-b'));
    } finally {
      await closeAll();
    }
  });

  it('a session sees only what it may read: itself, its descendants, the streams it holds', async () => {
    const h = await startHttp(t);
    try {
      const w = h.warren;
      // Stream resources ride on streams_transcript: the streams group, on request.
      const a = (
        await call(w, 'ipc_spawn', {
          script: idleScript,
          title: 'a',
          pipe: 'async',
          toolGroups: ['streams', 'sessions', 'events'],
        })
      ).session.id;
      const b = (await call(w, 'ipc_spawn', { script: idleScript, title: 'b', pipe: 'async' })).session.id;
      const asA = { kind: 'session' as const, sessionId: a, zone: 'default', depth: 1 };
      const a1 = (
        await call(
          w,
          'ipc_spawn',
          { script: idleScript, title: 'a1', toolGroups: ['streams', 'events'] },
          asA,
        )
      ).session.id;
      // a1 is an agent (depth 2), which may not spawn: its child comes from the kernel directly.
      const a11 = (
        await w.kernel.spawn(
          { ...asA, sessionId: a1, depth: 2 },
          { runtime: 'script', config: { script: idleScript }, title: 'a11', job: 'worker' },
        )
      ).session.id;

      const c = await connect(h, h.tokenOf(a));
      const { uris } = await allUris(c);
      const sessions = uris.filter((u) => u.startsWith('warren://sessions/')).sort();
      assert.deepEqual(sessions, [a, a1, a11].map((id) => `warren://sessions/${id}`).sort());
      const streams = uris.filter((u) => u.startsWith('warren://streams/')).map((u) => decodeURIComponent(u));
      for (const s of [`stdin:${a}`, `pipe:${a}`, `lifecycle:${a}`, `pipe:${a1}`, `lifecycle:${a1}`])
        assert.ok(streams.includes(`warren://streams/${s}/transcript`), `${s} in ${JSON.stringify(streams)}`);
      assert.ok(!streams.some((s) => s.includes(b)), 'nothing of its sibling');

      const own = await readJson(c, `warren://sessions/${a11}`);
      assert.equal(own.session.id, a11);
      assert.equal(own.events, `warren://sessions/${a11}/events`);
      await rejectsWith(c.readResource({ uri: `warren://sessions/${b}` }), -32602, {
        uri: `warren://sessions/${b}`,
        code: 'forbidden',
      });
      await rejectsWith(c.readResource({ uri: 'warren://sessions/init' }), -32602, { code: 'forbidden' });
      const bPipe = `warren://streams/${encodeURIComponent(`pipe:${b}`)}/transcript`;
      await rejectsWith(c.readResource({ uri: bPipe }), -32602, { code: 'forbidden' });
      await rejectsWith(c.subscribeResource({ uri: bPipe }), -32602, { code: 'forbidden' });

      // Its own log holds its own events only.
      const log = await readJson(c, 'warren://events');
      assert.ok(log.events.length > 0);
      assert.ok(log.events.every((e: Any) => e.session_id === a));

      // A worker (its job's set) may call none of the reading tools: resources are no side door.
      const worker = await connect(h, h.tokenOf(a11));
      assert.deepEqual((await allUris(worker)).uris, []);
      await rejectsWith(worker.readResource({ uri: `warren://sessions/${a11}` }), -32602, {
        code: 'forbidden',
      });
      await rejectsWith(worker.subscribeResource({ uri: 'warren://events' }), -32602, { code: 'forbidden' });
    } finally {
      await closeAll();
    }
  });

  it('reads are bounded and continue through `next`; unknown URIs are invalid params', async () => {
    const h = await startHttp(t);
    try {
      const w = h.warren;
      const { fd } = await call(w, 'streams_create', { name: 'long', selfEcho: true });
      for (let i = 0; i < 150; i++) await call(w, 'ipc_write', { fd, message: `m${i}` });
      const c = await connect(h, h.key);

      const first = await readJson(c, 'warren://streams/long/transcript');
      assert.equal(first.stream.name, 'long');
      assert.equal(first.messages.length, 100);
      assert.equal(first.messages[0].text, 'm149', 'newest first');
      const oldest = first.messages.at(-1).seq;
      assert.equal(first.next, `warren://streams/long/transcript?before=${oldest}`);
      const second = await readJson(c, first.next);
      assert.equal(second.messages.length, 50);
      assert.equal(second.messages.at(-1).text, 'm0');
      assert.equal(second.next, undefined, 'the end has no next');
      const small = await readJson(c, 'warren://streams/long/transcript?limit=7');
      assert.equal(small.messages.length, 7);

      // The operator's log pages forward by seq.
      const head = await h.head();
      const log = await readJson(c, `warren://events?after=${head - 5}`);
      assert.deepEqual(
        log.events.map((e: Any) => e.seq),
        [head - 4, head - 3, head - 2, head - 1, head],
      );
      assert.equal(log.next, undefined);
      const limited = await readJson(c, 'warren://events?after=0&limit=3');
      assert.equal(limited.events.length, 3);
      assert.equal(limited.next, `warren://events?after=${limited.events[2].seq}`);

      // Past the byte cap: fewer items, and `next` picks up exactly after them.
      const { fd: big } = await call(w, 'streams_create', { name: 'big', selfEcho: true });
      for (let i = 0; i < 4; i++) await call(w, 'ipc_write', { fd: big, message: `${i}`.repeat(200 * 1024) });
      const r = await c.readResource({ uri: 'warren://streams/big/transcript' });
      const text = (r.contents[0] as { text: string }).text;
      assert.ok(Buffer.byteLength(text) <= MAX_READ_BYTES);
      const page = JSON.parse(text);
      assert.ok(page.messages.length < 4 && page.messages.length >= 1);
      const rest = await readJson(c, page.next);
      assert.equal(page.messages.length + rest.messages.length, 4);

      await rejectsWith(c.readResource({ uri: 'test://nonexistent' }), -32602, { uri: 'test://nonexistent' });
      await rejectsWith(c.readResource({ uri: 'warren://nothing/here' }), -32602, {
        uri: 'warren://nothing/here',
      });
      await rejectsWith(c.readResource({ uri: 'warren://sessions/ses_nope' }), -32602, { code: 'not_found' });
      await rejectsWith(c.readResource({ uri: 'warren://events?after=-1' }), -32602, {});
      await rejectsWith(c.readResource({ uri: 'warren://events?limit=100000' }), -32602, {});
    } finally {
      await closeAll();
    }
  });

  it('a write to a subscribed stream sends exactly one update; unsubscribe stops them', async () => {
    const h = await startHttp(t);
    try {
      const w = h.warren;
      const { fd } = await call(w, 'streams_create', { name: 'watched' });
      const { fd: otherFd } = await call(w, 'streams_create', { name: 'unwatched' });
      const c = await connect(h, h.key);
      const seen = recordUpdates(c);
      await notificationsFlow(c, seen, () => call(w, 'ipc_write', { fd: otherFd, message: 'poke' }));
      const u = 'warren://streams/watched/transcript';
      await c.subscribeResource({ uri: u });

      await call(w, 'ipc_write', { fd, message: 'hello' });
      await until(() => seen.length >= 1, 20_000, 'an update');
      await settle();
      assert.deepEqual(seen, [u], 'exactly one notification for one write');

      await call(w, 'ipc_write', { fd: otherFd, message: 'elsewhere' });
      await settle();
      assert.equal(seen.length, 1, 'another stream does not notify');

      await call(w, 'ipc_write', { fd, message: 'again' });
      await until(() => seen.length >= 2, 20_000, 'a second update');
      await settle();
      assert.equal(seen.length, 2);

      await c.unsubscribeResource({ uri: u });
      await call(w, 'ipc_write', { fd, message: 'unheard' });
      await settle();
      assert.equal(seen.length, 2, 'no update after unsubscribe');

      // A session resource changes with anything about the session.
      const child = (await call(w, 'ipc_spawn', { script: idleScript })).session.id;
      await c.subscribeResource({ uri: `warren://sessions/${child}` });
      await call(w, 'kill', { id: child });
      await until(() => seen.includes(`warren://sessions/${child}`), 20_000, 'a session update');

      // A URI that is not warren's can be watched; it never changes.
      await c.subscribeResource({ uri: 'test://watched-resource' });
      await c.unsubscribeResource({ uri: 'test://watched-resource' });
    } finally {
      await closeAll();
    }
  });

  it('a dropped MCP session leaves no subscription and no commit listener behind', async () => {
    const h = await startHttp(t, { http: { mcp: { idleMs: 1000 } } });
    try {
      const w = h.warren;
      await call(w, 'streams_create', { name: 'room' });
      const before = commitListeners(w);

      // Closed by the client (DELETE /mcp).
      const c = await connect(h, h.key);
      await c.subscribeResource({ uri: 'warren://streams/room/transcript' });
      await c.subscribeResource({ uri: 'warren://events' });
      assert.equal(commitListeners(w), before + 1, 'one listener for the whole surface');
      const d = await connect(h, h.key);
      await d.subscribeResource({ uri: 'warren://streams/room/transcript' });
      assert.equal(commitListeners(w), before + 1, 'still one');
      await (c.transport as StreamableHTTPClientTransport).terminateSession();
      await (d.transport as StreamableHTTPClientTransport).terminateSession();
      await until(() => commitListeners(w) === before, 20_000, 'the listener to go');

      // Expired once its client is gone: the stream dropped, no DELETE (an open stream is not idle).
      const e = await connect(h, h.key);
      await e.subscribeResource({ uri: 'warren://events' });
      assert.equal(commitListeners(w), before + 1);
      await e.close();
      await until(() => commitListeners(w) === before, 8000, 'the idle session to take its listener');
    } finally {
      await closeAll();
    }
  });
});

describe('the subscription hub', () => {
  /** A commit source the test drives: each `commit` is one batch. */
  const source = () => {
    const listeners = new Set<(events: readonly LogEvent[]) => void>();
    return {
      listeners,
      onCommit(l: (events: readonly LogEvent[]) => void) {
        listeners.add(l);
        return () => listeners.delete(l);
      },
      touches: coreResources.touches,
      commit(events: Array<Partial<LogEvent>>) {
        const full = events.map((e, i) => ({
          seq: i + 1,
          id: `e${i}`,
          zone: 'default',
          ts: 0,
          type: 'stream.message',
          actor: 'x',
          session_id: null,
          stream_id: null,
          payload: {},
          ...e,
        }));
        for (const l of listeners) l(full);
      },
    };
  };

  it('sends one notification per subscribed URI per commit batch, whatever the batch holds', () => {
    const src = source();
    const hub = new SubscriptionHub(src);
    const seen: string[] = [];
    const subs = new Subscriptions(hub, (u) => seen.push(u));
    assert.equal(src.listeners.size, 0, 'no listener before a subscription');
    subs.add('warren://streams/a/transcript', 'stream:s1');
    subs.add('warren://sessions/x', 'session:x');
    subs.add('warren://sessions/x/events', 'session:x');
    assert.equal(src.listeners.size, 1);
    src.commit([{ stream_id: 's1' }, { stream_id: 's1' }, { stream_id: 's1', type: 'fd.opened' }]);
    assert.deepEqual(seen, ['warren://streams/a/transcript']);
    src.commit([{ stream_id: 's2' }, { session_id: 'y', type: 'session.status' }]);
    assert.equal(seen.length, 1, 'untouched keys notify nobody');
    src.commit([
      { session_id: 'x', type: 'session.status' },
      { session_id: 'x', type: 'session.output' },
    ]);
    assert.deepEqual(seen.slice(1).sort(), ['warren://sessions/x', 'warren://sessions/x/events']);
    // fd events on a stream do not change its transcript.
    src.commit([{ stream_id: 's1', type: 'fd.closed' }]);
    assert.equal(seen.length, 3);

    subs.remove('warren://sessions/x');
    assert.equal(hub.size, 2, 'session:x is still watched through its log');
    subs.close();
    assert.equal(hub.size, 0);
    assert.equal(src.listeners.size, 0, 'the listener goes with the last subscription');
    subs.add('warren://streams/a/transcript', 'stream:s1');
    assert.equal(hub.size, 0, 'a closed connection subscribes to nothing');
  });
});

describe('subscriptions over the zone socket and stdio', () => {
  it('closing the socket or the stdio relay drops its subscriptions and the commit listener', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-mcp-subs-'));
    const running = await serve(
      { host: '127.0.0.1', port: 0, dataDir: dir, durability: 'process', demo: false },
      { write: () => true },
    );
    try {
      const w = running.warren;
      const { fd } = await call(w, 'streams_create', { name: 'room' });
      const before = commitListeners(w);
      const client = new Client({ name: 'socket-subs', version: '0' });
      await client.connect(new SocketClientTransport(running.sockets.paths()[0]!));
      const seen = recordUpdates(client);
      await client.subscribeResource({ uri: 'warren://streams/room/transcript' });
      assert.equal(commitListeners(w), before + 1);
      await call(w, 'ipc_write', { fd, message: 'over the socket' });
      await until(() => seen.length === 1, 20_000, 'an update over the socket');
      await client.close();
      await until(() => commitListeners(w) === before, 20_000, 'the listener to go with the socket');

      // Through `warren mcp` (stdio relayed to /mcp): the update arrives on stdout, and the
      // relay's end (stdin closed) deletes its HTTP session and with it the subscription.
      const spawned = await call(w, 'ipc_spawn', {
        script: idleScript,
        pipe: 'async',
        toolGroups: ['streams'],
      });
      const id = spawned.session.id;
      const stdio = new Client({ name: 'stdio-subs', version: '0' });
      try {
        await stdio.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [WARREN_BIN, 'mcp', '--url', running.url],
            env: { PATH: process.env.PATH ?? '', WARREN_TOKEN: running.warren.tokens.mint(id, 0) },
            stderr: 'pipe',
          }),
        );
        const relayed = recordUpdates(stdio);
        const pipe = `warren://streams/${encodeURIComponent(`pipe:${id}`)}/transcript`;
        await stdio.subscribeResource({ uri: pipe });
        // Written until one arrives: the relay's GET stream may not be up for the first.
        await until(
          async () => {
            await call(w, 'ipc_write', { fd: spawned.pipeFd, message: 'through the relay' });
            await settle(200);
            return relayed.length > 0;
          },
          10_000,
          'an update through the relay',
        );
        assert.ok(relayed.every((u) => u === pipe));
      } finally {
        await stdio.close();
      }
      await until(() => commitListeners(w) === before, 20_000, 'the listener to go with the relay');
    } finally {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
