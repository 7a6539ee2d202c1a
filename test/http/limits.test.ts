import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { WarrenError } from '../../src/vocab/errors.ts';
import { operator } from '../../src/vocab/principal.ts';
import { request, startHttp } from '../helpers/http.ts';
import { mcpClient } from '../helpers/mcp.ts';
import { forEachWarren, idleScript } from '../helpers/warrens.ts';

const nested = (depth: number) => `{"name":"deep","data":${'['.repeat(depth)}${']'.repeat(depth)}}`;

forEachWarren('HTTP input that cannot crash or freeze the server', (t) => {
  it('JSON nested 5,000 deep: 400 invalid_input saying so, on REST and on /mcp', async () => {
    const h = await startHttp(t);
    for (const path of ['/v1/streams', '/v1/syscalls/streams_create']) {
      const r = await h.api('POST', path, undefined, { raw: nested(5000) });
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.equal(r.json.error.code, 'invalid_input');
      assert.match(r.json.error.message, /nests deeper than 64/);
    }
    const mcp = await request(h.url, 'POST', '/mcp', undefined, {
      auth: h.key,
      raw: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      headers: { accept: 'application/json, text/event-stream' },
    });
    assert.equal(mcp.status, 400);
    // Nesting inside strings is text, not depth.
    const ok = await h.api('POST', '/v1/streams', undefined, {
      raw: `{"name":"brackets-${'['.repeat(100)}"}`,
    });
    assert.notEqual(ok.status, 500);
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal((await h.api('GET', '/healthz', undefined, { auth: null })).status, 200);
  });

  it('deep input on any transport (here a direct call, as the unix socket makes): invalid_input, not internal', async () => {
    const h = await startHttp(t);
    const fd = (await h.api('POST', '/v1/streams', { name: 'deep-room' })).json.fd;
    let data: unknown = 'bottom';
    for (let i = 0; i < 5000; i++) data = [data];
    await assert.rejects(
      h.warren.call(operator(), 'ipc_write', { fd, message: 'm', data }),
      (e: WarrenError) => {
        assert.equal(e.code, 'invalid_input');
        assert.match(e.message, /nests deeper than 64/);
        return true;
      },
    );
  });

  it('a body over the cap: 413 invalid_input naming the cap', async () => {
    const h = await startHttp(t, { http: { bodyLimit: 64 * 1024 } });
    const r = await h.api('POST', '/v1/streams', { name: 'big', pad: 'x'.repeat(100_000) });
    assert.equal(r.status, 413);
    assert.equal(r.json.error.code, 'invalid_input');
    assert.match(r.json.error.message, /65536 bytes/);
  });

  it('a prompt or a message over its cap: 400 invalid_input naming the cap; nothing written', async () => {
    const h = await startHttp(t, { limits: { promptBytes: 1000, messageBytes: 500 } });
    await h.warren.store.writer.drained();
    const head = await h.head();
    const spawn = await h.api('POST', '/v1/sessions', { script: idleScript, prompt: 'é'.repeat(600) });
    assert.equal(spawn.status, 400, JSON.stringify(spawn.json));
    assert.match(spawn.json.error.message, /prompt is 1200 bytes, over the cap of 1000/);
    assert.equal(spawn.json.error.details.maxBytes, 1000);
    const room = await h.api('POST', '/v1/streams', { name: 'room' });
    const afterRoom = await h.head();
    assert.ok(afterRoom > head);
    const write = await h.api('POST', `/v1/fds/${room.json.fd}/write`, { message: 'x'.repeat(501) });
    assert.equal(write.status, 400);
    assert.match(write.json.error.message, /message is 501 bytes, over the cap of 500/);
    await h.warren.store.writer.drained();
    assert.equal(await h.head(), afterRoom);
    assert.equal(
      (await h.api('POST', `/v1/fds/${room.json.fd}/write`, { message: 'x'.repeat(500) })).status,
      200,
    );
  });

  it('errors carry a request id; internal failures never show their text, on REST and MCP', async () => {
    const h = await startHttp(t);
    const miss = await h.api('GET', '/v1/sessions/ses_nope');
    assert.equal(miss.status, 404);
    assert.match(miss.json.error.requestId, /^req_[0-9a-f]{20}$/);
    h.warren.kernel.ps = async () => {
      throw new Error('SECRET-INTERNALS at /srv/warren/db');
    };
    const rest = await h.api('GET', '/v1/sessions');
    assert.equal(rest.status, 500);
    assert.equal(rest.json.error.code, 'internal');
    assert.doesNotMatch(JSON.stringify(rest.json), /SECRET|srv/);
    assert.ok(rest.json.error.requestId);
    const c = await mcpClient(h.url, h.key);
    try {
      const r = (await c.callTool({ name: 'ps', arguments: {} })) as CallToolResult;
      assert.equal(r.isError, true);
      assert.doesNotMatch(JSON.stringify(r), /SECRET|srv/);
      const err = (r.structuredContent as { error: { code: string; requestId: string } }).error;
      assert.equal(err.code, 'internal');
      assert.match(err.requestId, /^req_/);
      const typed = (await c.callTool({
        name: 'session_show',
        arguments: { id: 'ses_nope' },
      })) as CallToolResult;
      assert.equal((typed.structuredContent as { error: { code: string } }).error.code, 'not_found');
      assert.ok((typed.structuredContent as { error: { requestId?: string } }).error.requestId);
    } finally {
      await c.close();
    }
  });
});
