import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { mcpClient, structured } from '../helpers/mcp.ts';
import { forEachWarren, idleScript, until } from '../helpers/warrens.ts';

/** A bare initialize: what a client that never closes its sessions sends, again and again. */
async function initialize(h: HttpWarren, bearer: string) {
  const res = await fetch(`${h.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'flood', version: '0' },
      },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, sid: res.headers.get('mcp-session-id'), text };
}

forEachWarren('MCP sessions are bounded', (t) => {
  it('past the cap per credential: a clear JSON-RPC error; other callers are unaffected; closing frees a slot', async () => {
    const h = await startHttp(t, { http: { mcp: { maxSessionsPerCaller: 3 } } });
    const clients: Client[] = [];
    try {
      for (let i = 0; i < 3; i++) clients.push(await mcpClient(h.url, h.key));
      // A flood of initializes past the cap makes no session (and so holds no memory).
      for (let i = 0; i < 50; i++) {
        const r = await initialize(h, h.key);
        assert.equal(r.status, 429, r.text);
        assert.equal(r.sid, null);
        const body = JSON.parse(r.text);
        assert.equal(body.error.code, -32000);
        assert.match(body.error.message, /too many open MCP sessions for this caller \(cap 3\)/);
        assert.equal(body.error.data.code, 'limit_exceeded');
        assert.match(body.error.data.requestId, /^req_/);
      }
      await assert.rejects(mcpClient(h.url, h.key), /too many open MCP sessions/);
      // Another credential has its own allowance.
      const spawned = structured<{ session: { id: string } }>(
        await clients[0]!.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
      );
      const agent = await mcpClient(h.url, h.tokenOf(spawned.session.id));
      clients.push(agent);
      // Closing one (DELETE /mcp) frees exactly one slot.
      await (
        clients.shift()!.transport as unknown as { terminateSession(): Promise<void> }
      ).terminateSession();
      clients.push(await mcpClient(h.url, h.key));
      assert.equal((await initialize(h, h.key)).status, 429);
    } finally {
      await Promise.allSettled(clients.map((c) => c.close()));
    }
  });

  it('concurrent initializes cannot overshoot the cap', async () => {
    const h = await startHttp(t, { http: { mcp: { maxSessionsPerCaller: 3 } } });
    const all = await Promise.all(Array.from({ length: 20 }, () => initialize(h, h.key)));
    assert.equal(all.filter((r) => r.status === 200).length, 3);
    assert.equal(all.filter((r) => r.status === 429).length, 17);
  });

  it('idle sessions expire, and their slots with them', async () => {
    const h = await startHttp(t, { http: { mcp: { maxSessionsPerCaller: 2, idleMs: 1000 } } });
    const first = await initialize(h, h.key);
    const second = await initialize(h, h.key);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal((await initialize(h, h.key)).status, 429);
    await until(async () => (await initialize(h, h.key)).status === 200, 20_000);
    // The expired session is gone for good.
    const res = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${h.key}`,
        'mcp-session-id': first.sid!,
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    assert.equal(res.status, 404);
  });
});
