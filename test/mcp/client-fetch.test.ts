import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import { after, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { isolatingFetch } from '../../src/surfaces/mcp/client-fetch.ts';
import { startHttp } from '../helpers/http.ts';
import { mcpClient, structured } from '../helpers/mcp.ts';
import { forEachWarren, until } from '../helpers/warrens.ts';

/** A server whose body is two chunks, the second held until `release` (or the client hangs up). */
async function chunkServer() {
  const held = new Set<() => void>();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    const end = () => res.end('data: two\n\n');
    held.add(end);
    res.on('close', () => held.delete(end));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    release: () => {
      for (const end of held) end();
      held.clear();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

it('requests sharing one signal leave no listener on it once their bodies are read', async () => {
  const s = await chunkServer();
  try {
    const shared = new AbortController();
    const f = isolatingFetch();
    for (let i = 0; i < 50; i++) {
      const res = await f(s.url, { signal: shared.signal });
      const text = res.text();
      assert.equal(getEventListeners(shared.signal, 'abort').length, 1, 'linked while the body streams');
      s.release();
      assert.equal(await text, 'data: one\n\ndata: two\n\n');
    }
    assert.equal(getEventListeners(shared.signal, 'abort').length, 0);
    // A cancelled body unlinks too.
    const res = await f(s.url, { signal: shared.signal });
    await res.body?.cancel();
    assert.equal(getEventListeners(shared.signal, 'abort').length, 0);
  } finally {
    await s.close();
  }
});

it('aborting the shared signal still aborts a body in flight', async () => {
  const s = await chunkServer();
  try {
    const shared = new AbortController();
    const res = await isolatingFetch()(s.url, { signal: shared.signal });
    const reader = res.body!.getReader();
    assert.ok(!(await reader.read()).done);
    shared.abort(new Error('transport closed'));
    await assert.rejects(reader.read());
    assert.equal(getEventListeners(shared.signal, 'abort').length, 0);
  } finally {
    await s.close();
  }
});

forEachWarren('MCP client over Streamable HTTP', (t) => {
  const clients: Client[] = [];
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
  });

  it('many calls on one client leave at most the standalone stream listening on its transport signal', async () => {
    const h = await startHttp(t);
    const c = await mcpClient(h.url, h.key);
    clients.push(c);
    const { fd } = structured<{ fd: number }>(
      await c.callTool({ name: 'streams_create', arguments: { name: 'listeners', selfEcho: false } }),
    );
    for (let i = 0; i < 300; i++)
      await c.callTool({ name: 'ipc_write', arguments: { fd, message: `m${i}` } });
    // The SDK keeps its AbortController private; this is the signal every request of it gets.
    const signal = (c.transport as unknown as { _abortController: AbortController })._abortController.signal;
    // A call returns on its answer, a moment before its response stream ends: then only the
    // standalone GET stream is still linked (without isolatingFetch, one per call: 300 here).
    await until(() => getEventListeners(signal, 'abort').length <= 1, 5_000, 'one listener left');
  });
});
