/**
 * The attack (issue 25): 100 peers writing 10 MiB without a newline on an MCP unix socket.
 * Lines were capped at 1 MiB, but a refused peer's further bytes were still read to be
 * dropped, a buffer per read, all of them for a peer that keeps writing. Played
 * on a real unix socket with the real transport; what is measured is bytes (held by the
 * transport, read from the peer), never time.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { LineTransport } from '../../src/util/line-transport.ts';

const CAP = 256 * 1024;
/** What a socket may read past a pause: its stream's buffer, a read or two (64 KiB each). */
const READ_AHEAD = 256 * 1024;
/** A block of the transport (small pieces are gathered into one). */
const BLOCK = 4096;

let dir: string;
const served: { conn: Socket; transport: LineTransport; maxHeld: number }[] = [];
const server = createServer((conn) => {
  const transport = new LineTransport(conn, CAP);
  const entry = { conn, transport, maxHeld: 0 };
  served.push(entry);
  void transport.start();
  // After the transport's own handler: what it holds once each chunk is taken.
  conn.on('data', () => {
    entry.maxHeld = Math.max(entry.maxHeld, transport.heldBytes);
  });
  conn.on('error', () => {});
});

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'warren-lines-'));
  await new Promise<void>((r) => server.listen(join(dir, 's.sock'), r));
});
after(async () => {
  for (const s of served) s.conn.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

/** A peer connected to `path`: what the server said to it, and when it was closed. */
async function connectPeer(
  path: string,
): Promise<{ peer: Socket; said: () => string; closed: Promise<void> }> {
  const peer = connect(path);
  peer.on('error', () => {});
  let said = '';
  peer.setEncoding('utf8');
  peer.on('data', (d: string) => {
    said += d;
  });
  const closed = new Promise<void>((r) => peer.once('close', () => r()));
  await new Promise<void>((r) => peer.once('connect', () => r()));
  return { peer, said: () => said, closed };
}

it('an unterminated line is held up to the cap, dropped there, and the rest is never read', async () => {
  const { peer, said, closed } = await connectPeer(join(dir, 's.sock'));
  const total = 32 * CAP;
  const chunk = Buffer.alloc(16 * 1024, 'x');
  let written = 0;
  let open = true;
  void closed.then(() => {
    open = false;
  });
  // Writes until all is written or its writes wait for good (the server reads no more).
  while (written < total && open) {
    written += chunk.length;
    if (!peer.write(chunk)) {
      const drained = await Promise.race([
        new Promise<boolean>((r) => peer.once('drain', () => r(true))),
        closed.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(false), 3000).unref()),
      ]);
      if (!drained) break;
    }
  }
  await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000).unref())]);
  assert.equal(open, false, 'the server closed the connection');
  const s = served.at(-1)!;
  assert.match(said(), new RegExp(`"id":null.*longer than ${CAP} bytes: connection closed`));
  assert.ok(s.maxHeld <= CAP + BLOCK, `held at most the cap and a block (${s.maxHeld})`);
  assert.ok(s.maxHeld > CAP - 64 * 1024, `the line was held while it could still be one (${s.maxHeld})`);
  assert.equal(s.transport.heldBytes, 0, 'nothing held after the refusal');
  assert.ok(
    s.conn.bytesRead <= CAP + READ_AHEAD,
    `read ${s.conn.bytesRead} bytes of the ${written} written: not the rest of the flood`,
  );
  assert.ok(written < total, `the peer's writes waited: ${written} of ${total} bytes written`);
});

it('a line under the cap is delivered whole and nothing of it is held after', async () => {
  const before = served.length;
  const peer = connect(join(dir, 's.sock'));
  peer.on('error', () => {});
  await new Promise<void>((r) => peer.once('connect', () => r()));
  for (let i = 0; i < 1000 && served.length === before; i++) await new Promise((r) => setTimeout(r, 5));
  const s = served[before]!;
  const got = new Promise<unknown>((r) => {
    s.transport.onmessage = (m) => r(m);
  });
  const line = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/x', params: { pad: 'y'.repeat(CAP - 200) } })}\n`;
  for (let i = 0; i < line.length; i += 5000) peer.write(line.slice(i, i + 5000));
  const m = (await got) as { params: { pad: string } };
  assert.equal(m.params.pad.length, CAP - 200);
  assert.equal(s.transport.heldBytes, 0);
  peer.destroy();
});

/** A new peer and the transport that serves it. */
async function peerAndTransport(): Promise<{ peer: Socket; transport: LineTransport }> {
  const before = served.length;
  const { peer } = await connectPeer(join(dir, 's.sock'));
  for (let i = 0; i < 1000 && served.length === before; i++) await new Promise((r) => setTimeout(r, 5));
  return { peer, transport: served[before]!.transport };
}

it('whole lines in one chunk are delivered each, a CRLF line without its CR', async () => {
  const { peer, transport } = await peerAndTransport();
  const got: unknown[] = [];
  const three = new Promise<void>((r) => {
    transport.onmessage = (m) => {
      got.push(m);
      if (got.length === 3) r();
    };
  });
  const note = (n: number) => JSON.stringify({ jsonrpc: '2.0', method: `notifications/${n}` });
  // One write: the server reads it as one chunk (or a few), every line whole in it.
  peer.write(`${note(1)}\n${note(2)}\r\n\n${note(3)}\n`);
  await three;
  assert.deepEqual(
    got.map((m) => (m as { method: string }).method),
    ['notifications/1', 'notifications/2', 'notifications/3'],
  );
  assert.equal(transport.heldBytes, 0);
  peer.destroy();
});

it('a line over the cap that arrives whole, newline and all, is refused as one that does not', async () => {
  // A server of a small cap: the whole line, newline and all, comes in one read.
  const small = 100;
  const transports: LineTransport[] = [];
  const got: unknown[] = [];
  const srv = createServer((conn) => {
    conn.on('error', () => {});
    const t = new LineTransport(conn, small);
    t.onmessage = (m) => got.push(m);
    transports.push(t);
    void t.start();
  });
  const path = join(dir, 'small.sock');
  await new Promise<void>((r) => srv.listen(path, r));
  const { peer, said, closed } = await connectPeer(path);
  try {
    const fits = JSON.stringify({ jsonrpc: '2.0', method: 'n' });
    peer.write(`${fits}\n${fits}${' '.repeat(small - fits.length + 1)}\n${fits}\n`);
    await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000).unref())]);
    assert.match(said(), new RegExp(`longer than ${small} bytes: connection closed`));
    assert.equal(got.length, 1, 'the line before it delivered; the one after it never read');
    assert.equal(transports[0]?.heldBytes, 0);
  } finally {
    peer.destroy();
    for (const t of transports) await t.close();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});
