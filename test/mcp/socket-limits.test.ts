/**
 * The attack (issue 25): unterminated lines on an MCP unix socket were buffered up to 10 MB
 * per connection, with no cap on connections: 100 peers took the server to 2 GB and held its
 * event loop 5.8 s. Now a line over `sockets.maxLineBytes` closes its connection after an
 * error line, and a connection past `sockets.maxConnections` is refused with one; the server
 * goes on. Played against a real server (zone socket) and a group's socket (the agents' side).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dataDir, socketOf, start, tree } from '../groups/helpers.ts';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { forEachWarren } from '../helpers/warrens.ts';

const MAX_LINE = 64 * 1024;
const MAX_CONNECTIONS = 3;

/** A raw peer: what it reads, line by line, and when the server closes on it. */
interface Peer {
  socket: Socket;
  lines: string[];
  closed: Promise<void>;
  /** The next line read (bounded). */
  next(): Promise<string>;
}

function peer(path: string): Promise<Peer> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const lines: string[] = [];
    let partial = '';
    let wake: (() => void) | undefined;
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    void closed.then(() => wake?.());
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      const parts = (partial + d).split('\n');
      partial = parts.pop()!;
      lines.push(...parts);
      wake?.();
    });
    socket.on('error', () => {}); // a write into a socket the server closed: the test reads `closed`
    socket.once('connect', () =>
      resolve({
        socket,
        lines,
        closed,
        async next() {
          const until = Date.now() + 10_000;
          while (lines.length === 0 && !socket.destroyed && Date.now() < until)
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, 200);
            });
          const line = lines.shift();
          if (line === undefined) throw new Error('no line read');
          return line;
        },
      }),
    );
    socket.once('error', reject);
  });
}

/** `p` closed by the server within 10 s, or the test fails (never hangs). */
async function closedByServer(p: Peer): Promise<void> {
  const t = new Promise<'open'>((r) => setTimeout(() => r('open'), 10_000).unref());
  assert.notEqual(await Promise.race([p.closed, t]), 'open', 'the server did not close the connection');
}

const request = (id: number, method: string, params: Record<string, unknown> = {}) =>
  `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;

const initialize = (id = 1) =>
  request(id, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'limits-test', version: '0' },
  });

/** Initialized and answering: a ping gets its pong. */
async function works(p: Peer): Promise<void> {
  assert.equal(await initialized(p), true, 'refused: too many connections open');
}

/**
 * Initialized and answering (true), or refused for the connection cap (false): the server is
 * another process, and the close of a peer the test just ended may not have reached it yet.
 */
async function initialized(p: Peer): Promise<boolean> {
  p.socket.write(initialize(1));
  const first = JSON.parse(await p.next());
  if (first.id === null && first.error?.code === -32000) return false;
  assert.equal(first.id, 1, JSON.stringify(first));
  p.socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  p.socket.write(request(2, 'ping'));
  assert.deepEqual(JSON.parse(await p.next()), { jsonrpc: '2.0', id: 2, result: {} });
  return true;
}

/** Writes `bytes` of `x` without a newline, in chunks, until written or the server closes. */
async function flood(p: Peer, bytes: number): Promise<void> {
  const chunk = Buffer.alloc(16 * 1024, 'x');
  for (let sent = 0; sent < bytes && !p.socket.destroyed; sent += chunk.length) {
    if (!p.socket.write(chunk)) await Promise.race([new Promise((r) => p.socket.once('drain', r)), p.closed]);
  }
}

describe('MCP unix socket limits (a real server)', () => {
  let server: ServerProcess;
  let dir: string;
  let path: string;
  const peers: Peer[] = [];
  const open = async () => {
    const p = await peer(path);
    peers.push(p);
    return p;
  };
  /** A peer the server took and initialized: refused while it still counts peers just closed, it tries again (10 s). */
  const admitted = async () => {
    for (const until = Date.now() + 10_000; ; ) {
      const p = await open();
      if (await initialized(p)) return p;
      await p.closed;
      assert.ok(Date.now() < until, 'the server never freed the slots of the closed connections');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warren-socklim-'));
    server = await startServer({
      dataDir: join(dir, 'data'),
      env: {
        WARREN_SOCKET_MAX_LINE_BYTES: String(MAX_LINE),
        WARREN_SOCKET_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      },
    });
    path = join(dir, 'data', 'mcp', 'default.sock');
  });
  after(async () => {
    for (const p of peers) p.socket.destroy();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a line over the cap closes that connection with an error line; the server and other peers go on', async () => {
    const bystander = await open();
    await works(bystander);
    const attacker = await open();
    // Far past the cap: the attacker is still writing when it is refused, and reads the reason anyway.
    await flood(attacker, 64 * MAX_LINE);
    await closedByServer(attacker);
    const said = JSON.parse(attacker.lines[0] ?? '{}');
    assert.equal(said.id, null);
    assert.equal(said.error?.code, -32600);
    assert.match(said.error?.message, new RegExp(`longer than ${MAX_LINE} bytes: connection closed`));
    // The server answers, the bystander's session still works, and a new peer gets in.
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    bystander.socket.write(request(3, 'ping'));
    assert.equal(JSON.parse(await bystander.next()).id, 3);
    bystander.socket.destroy();
    await bystander.closed;
    await admitted();
  });

  it('requests written together, before the connection has its MCP server, are each answered once, in order', async () => {
    const p = await open();
    p.socket.write(
      initialize(1) +
        `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n` +
        request(2, 'ping') +
        request(3, 'ping'),
    );
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(JSON.parse(await p.next()).id);
    assert.deepEqual(ids, [1, 2, 3]);
    p.socket.write(request(4, 'ping'));
    assert.equal(JSON.parse(await p.next()).id, 4, 'and nothing twice');
    p.socket.destroy();
    await p.closed;
  });

  it('a line just under the cap, written in pieces, is read whole', async () => {
    const p = await admitted();
    const big = request(7, 'ping', { pad: 'y'.repeat(MAX_LINE - 200) });
    assert.ok(Buffer.byteLength(big) < MAX_LINE && Buffer.byteLength(big) > MAX_LINE - 300);
    for (let i = 0; i < big.length; i += 1000) p.socket.write(big.slice(i, i + 1000));
    assert.deepEqual(JSON.parse(await p.next()), { jsonrpc: '2.0', id: 7, result: {} });
    p.socket.destroy();
    await p.closed;
  });

  it('a request written a byte at a time is read whole', async () => {
    const p = await admitted();
    const line = request(8, 'ping', { pad: 'z'.repeat(5000) });
    p.socket.setNoDelay(true);
    for (let i = 0; i < line.length; i += 7) {
      p.socket.write(line.slice(i, i + 7));
      if (i % 700 === 0) await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(JSON.parse(await p.next()), { jsonrpc: '2.0', id: 8, result: {} });
    p.socket.destroy();
    await p.closed;
  });

  it('the connection past the cap is refused with an error line; a freed slot takes a new one', async () => {
    for (const p of peers) p.socket.destroy();
    await Promise.all(peers.splice(0).map((p) => p.closed));
    const held = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) held.push(await admitted());
    const refused = await open();
    await closedByServer(refused);
    const said = JSON.parse(refused.lines[0] ?? '{}');
    assert.equal(said.error?.code, -32000);
    assert.match(said.error?.message, new RegExp(`${MAX_CONNECTIONS} connections open, the most it takes`));
    // Those held still work; one closes, and its slot takes a new peer.
    held[1]!.socket.write(request(9, 'ping'));
    assert.equal(JSON.parse(await held[1]!.next()).id, 9);
    held[0]!.socket.destroy();
    await held[0]!.closed;
    // The server sees the close on one of its next turns: a new peer gets the freed slot.
    await admitted();
  });
});

forEachWarren('MCP unix socket limits: a group socket', (t) => {
  it('an agent-side socket has the same caps: an over-long line is closed on, the group socket still serves', async () => {
    const dir = dataDir();
    const w = await t.open({
      kernel: { sockets: { maxLineBytes: MAX_LINE, maxConnections: MAX_CONNECTIONS } },
      plugins: { config: { groups: { dataDir: dir } } },
    });
    await tree(w);
    await start(w, dir, 'main');
    const path = socketOf(dir, 'main');
    const attacker = await peer(path);
    // Far past the cap: the attacker is still writing when it is refused, and reads the reason anyway.
    await flood(attacker, 64 * MAX_LINE);
    await closedByServer(attacker);
    assert.match(JSON.parse(attacker.lines[0] ?? '{}').error?.message ?? '', /longer than 65536 bytes/);
    const ok = await peer(path);
    await works(ok);
    const more = [];
    for (let i = 1; i < MAX_CONNECTIONS; i++) more.push(await peer(path));
    const refused = await peer(path);
    await closedByServer(refused);
    assert.match(JSON.parse(refused.lines[0] ?? '{}').error?.message ?? '', /connections open/);
    for (const p of [ok, ...more]) p.socket.destroy();
  });
});
