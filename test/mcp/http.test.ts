import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startHttp } from '../helpers/http.ts';
import { mcpClient, structured } from '../helpers/mcp.ts';
import { forEachWarren, idleScript } from '../helpers/warrens.ts';

forEachWarren('MCP over Streamable HTTP', (t) => {
  const clients: Client[] = [];
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
  });
  const connect = async (url: string, bearer: string) => {
    const c = await mcpClient(url, bearer);
    clients.push(c);
    return c;
  };

  it('an operator sees the operator tool set and calls tools through the syscall table', async () => {
    const h = await startHttp(t);
    const c = await connect(h.url, h.key);
    assert.equal(c.getServerVersion()?.name, 'warren');
    const names = (await c.listTools()).tools.map((tool) => tool.name).sort();
    for (const n of ['ipc_spawn', 'ipc_write', 'ipc_read', 'ipc_close', 'events', 'kill', 'tools_enable'])
      assert.ok(names.includes(n), n);
    assert.ok(!names.includes('ipc_share_stream'), 'operators have no parent to share with');
    const spawn = (await c.listTools()).tools.find((tool) => tool.name === 'ipc_spawn')!;
    assert.equal(spawn.inputSchema.type, 'object');
    assert.ok(spawn.description?.includes('pipe'));
    const r = await c.callTool({
      name: 'ipc_spawn',
      arguments: { title: 'via-mcp', script: idleScript, pipe: 'async' },
    });
    const out = structured<{ session: { id: string; title: string } }>(r);
    assert.equal(out.session.title, 'via-mcp');
    const ps = structured<{ sessions: Array<{ id: string }> }>(
      await c.callTool({ name: 'ps', arguments: {} }),
    );
    assert.ok(ps.sessions.some((s) => s.id === out.session.id));
  });

  it('errors come back as tool errors with the typed code; unknown tools as protocol errors', async () => {
    const h = await startHttp(t);
    const c = await connect(h.url, h.key);
    const r = (await c.callTool({ name: 'ipc_close', arguments: { fd: 99 } })) as {
      isError: boolean;
      content: Array<{ text: string }>;
    };
    assert.equal(r.isError, true);
    assert.match(r.content[0]!.text, /^error \[not_found\]/);
    const bad = (await c.callTool({ name: 'ipc_spawn', arguments: { pipe: 'sideways' } })) as {
      isError: boolean;
      content: Array<{ text: string }>;
    };
    assert.equal(bad.isError, true);
    assert.match(bad.content[0]!.text, /invalid_input/);
    await assert.rejects(c.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool/);
  });

  it('a session sees its job’s set at any depth: an ipc_spawn child is an orchestrator, and spawns in turn', async () => {
    const h = await startHttp(t);
    const op = await connect(h.url, h.key);
    const lead = structured<{ session: { id: string } }>(
      await op.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
    );
    const leadClient = await connect(h.url, h.tokenOf(lead.session.id));
    const leadTools = (await leadClient.listTools()).tools.map((x) => x.name).sort();
    assert.ok(
      leadTools.includes('ipc_spawn') &&
        leadTools.includes('task_create') &&
        leadTools.includes('ipc_share_stream'),
    );
    for (const n of [
      'streams_create',
      'events',
      'kill',
      'schedule_create',
      'service_register',
      'schedule_task',
    ])
      assert.ok(!leadTools.includes(n), `${n} is not an orchestrator's by default`);

    let parent = leadClient;
    for (const depth of [2, 3]) {
      const child = structured<{ session: { id: string; depth: number } }>(
        await parent.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
      );
      assert.equal(child.session.depth, depth);
      const c = await connect(h.url, h.tokenOf(child.session.id));
      assert.deepEqual((await c.listTools()).tools.map((x) => x.name).sort(), leadTools, `depth ${depth}`);
      parent = c;
    }
    const denied = (await parent.callTool({ name: 'kill', arguments: { id: lead.session.id } })) as {
      isError: boolean;
      content: Array<{ text: string }>;
    };
    assert.equal(denied.isError, true);
    assert.match(
      denied.content[0]!.text,
      /forbidden.*kill is not in this session's tool set \(group sessions/,
    );
  });

  it('grants narrow a child; deny wins; a child never gets more than its parent', async () => {
    const h = await startHttp(t);
    const op = await connect(h.url, h.key);
    const lead = structured<{ session: { id: string; tools: string[] } }>(
      await op.callTool({
        name: 'ipc_spawn',
        arguments: {
          script: idleScript,
          toolGroups: ['sessions'],
          grants: { allow: ['ipc_*', 'ps'], deny: ['ipc_terminate'] },
        },
      }),
    );
    assert.ok(lead.session.tools.includes('ps'));
    assert.ok(!lead.session.tools.includes('kill'));
    assert.ok(!lead.session.tools.includes('ipc_terminate'));
    const leadClient = await connect(h.url, h.tokenOf(lead.session.id));
    const child = structured<{ session: { tools: string[] } }>(
      await leadClient.callTool({
        name: 'ipc_spawn',
        arguments: { script: idleScript, tools: ['ipc_write', 'kill', 'ipc_read'] },
      }),
    );
    assert.deepEqual(
      child.session.tools.sort(),
      ['ipc_read', 'ipc_write'],
      'kill was never the parent’s to give',
    );
  });

  it('under the depth-tier policy, a worker (depth 3+) may only reply on its own pipe and read', async () => {
    const h = await startHttp(t, {
      gating: {
        tiers: {
          agent: ['ipc_spawn', 'ipc_write', 'ipc_read', 'ipc_list_fds'],
          worker: ['ipc_write', 'ipc_read', 'ipc_list_fds'],
        },
      },
    });
    const op = await connect(h.url, h.key);
    const lead = structured<{ session: { id: string } }>(
      await op.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
    );
    const leadClient = await connect(h.url, h.tokenOf(lead.session.id));
    const agent = structured<{ session: { id: string } }>(
      await leadClient.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
    );
    const agentClient = await connect(h.url, h.tokenOf(agent.session.id));
    const worker = structured<{ session: { id: string; depth: number } }>(
      await agentClient.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
    );
    assert.equal(worker.session.depth, 3);
    const w = await connect(h.url, h.tokenOf(worker.session.id));
    assert.deepEqual((await w.listTools()).tools.map((x) => x.name).sort(), [
      'ipc_list_fds',
      'ipc_read',
      'ipc_write',
    ]);
    const reply = (await w.callTool({ name: 'ipc_write', arguments: { fd: 1, message: 'done' } })) as {
      isError?: boolean;
    };
    assert.ok(!reply.isError);
    const elsewhere = (await w.callTool({ name: 'ipc_write', arguments: { fd: 0, message: 'x' } })) as {
      isError: boolean;
      content: Array<{ text: string }>;
    };
    assert.equal(elsewhere.isError, true);
    assert.match(elsewhere.content[0]!.text, /only to its own pipe \(fd 1\)/);
  });

  it('long waits send progress notifications and come back bounded', async () => {
    const h = await startHttp(t, { kernel: { maxWaitMs: 700 }, http: { mcp: { progressEveryMs: 100 } } });
    const op = await connect(h.url, h.key);
    const busy = structured<{ lifecycleFd: number }>(
      await op.callTool({ name: 'ipc_spawn', arguments: { script: { steps: [{ sleep: 60_000 }] } } }),
    );
    const seen: Array<{ progress: number; message?: string }> = [];
    const r = await op.callTool({ name: 'ipc_wait', arguments: { fd: busy.lifecycleFd } }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    assert.equal(structured<{ timedOut: boolean }>(r).timedOut, true);
    assert.ok(seen.length >= 3, `progress notifications: ${seen.length}`);
    assert.deepEqual(
      seen.map((p) => p.progress),
      seen.map((_, i) => i + 1),
      'progress increases',
    );
    assert.match(seen[0]!.message ?? '', /ipc_wait: still waiting/);
  });

  it('auth: no token, a bad token, a stopped session’s token', async () => {
    const h = await startHttp(t);
    await assert.rejects(mcpClient(h.url, 'nope'), /401|invalid API key|unauthenticated/i);
    await assert.rejects(mcpClient(h.url, 'wst_ses_x.forged'), /401|invalid session token|unauthenticated/i);
    const op = await connect(h.url, h.key);
    const a = structured<{ session: { id: string } }>(
      await op.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
    );
    await op.callTool({ name: 'kill', arguments: { id: a.session.id } });
    await assert.rejects(mcpClient(h.url, h.tokenOf(a.session.id)), /has stopped/);
    const res = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    assert.equal(res.status, 401);
  });

  it('rejects foreign Origin and Host headers (DNS rebinding)', async () => {
    const h = await startHttp(t);
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${h.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${h.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(init),
      });
    assert.equal((await post({ origin: 'https://evil.example' })).status, 403);
    // fetch drops a custom Host header; node:http sends what it is given.
    const hostStatus = await new Promise<number>((resolve, reject) => {
      const u = new URL(`${h.url}/mcp`);
      const req = httpRequest(
        {
          host: u.hostname,
          port: u.port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host: 'evil.example',
            authorization: `Bearer ${h.key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    assert.equal(hostStatus, 403);
    const ok = await post({ origin: 'http://localhost:1234' });
    assert.equal(ok.status, 200);
    assert.ok(ok.headers.get('mcp-session-id'));
  });

  it('a session belongs to the caller that opened it', async () => {
    const h = await startHttp(t);
    const op = await connect(h.url, h.key);
    const a = structured<{ session: { id: string } }>(
      await op.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
    );
    const sid = (op.transport as unknown as { sessionId: string }).sessionId;
    const res = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${h.tokenOf(a.session.id)}`,
        'mcp-session-id': sid,
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    assert.equal(res.status, 403);
  });
});
