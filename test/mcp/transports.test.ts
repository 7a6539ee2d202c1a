import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type Running, serve } from '../../src/app/server.ts';
import { SocketClientTransport, structured } from '../helpers/mcp.ts';
import { WARREN_BIN } from '../helpers/server.ts';
import { idleScript } from '../helpers/warrens.ts';

const quiet = { write: () => true };

describe('MCP over stdio (warren mcp) and the per-zone unix socket', () => {
  let dir: string;
  let running: Running;
  const clients: Client[] = [];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warren-mcp-'));
    running = await serve(
      { host: '127.0.0.1', port: 0, dataDir: dir, durability: 'process', demo: false },
      quiet,
    );
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const stdioClient = async (env: Record<string, string>) => {
    const client = new Client({ name: 'stdio-test', version: '0' });
    clients.push(client);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [WARREN_BIN, 'mcp', '--url', running.url],
        env: { PATH: process.env.PATH ?? '', ...env },
        stderr: 'pipe',
      }),
    );
    return client;
  };

  it('the unix socket is 0600, per zone, and its caller is that zone’s operator', async () => {
    const path = running.sockets.paths()[0] ?? '';
    assert.ok(path.endsWith('default.sock'));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const client = new Client({ name: 'socket-test', version: '0' });
    clients.push(client);
    await client.connect(new SocketClientTransport(path));
    const names = (await client.listTools()).tools.map((t) => t.name);
    // The operator's default list, with the rest a tools_groups call away.
    assert.ok(names.includes('ipc_spawn') && names.includes('tools_groups'), 'operator tools');
    const room = structured<{ stream: { owner: string } }>(
      await client.callTool({ name: 'streams_create', arguments: { name: 'via-socket' } }),
    );
    assert.equal(room.stream.owner, 'operator:local');
  });

  it('a new zone gets its own socket', async () => {
    await running.warren.call({ kind: 'operator', name: 'admin', zone: 'team-b' }, 'streams_create', {
      name: 'b-room',
    });
    const deadline = Date.now() + 3000;
    while (!running.sockets.paths().some((p) => p.endsWith('team-b.sock')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const path = running.sockets.paths().find((p) => p.endsWith('team-b.sock'))!;
    const client = new Client({ name: 'socket-b', version: '0' });
    clients.push(client);
    await client.connect(new SocketClientTransport(path));
    const { streams } = structured<{ streams: Array<{ name: string; zone: string }> }>(
      await client.callTool({ name: 'ipc_list_streams', arguments: {} }),
    );
    assert.deepEqual(
      streams.map((s) => [s.name, s.zone]),
      [['b-room', 'team-b']],
    );
  });

  it('warren mcp proxies stdio to the daemon with a session token, gated like HTTP', async () => {
    const op = { kind: 'operator' as const, name: 'admin', zone: 'default' };
    const spawned = (await running.warren.call(op, 'ipc_spawn', {
      script: idleScript,
      title: 'stdio-agent',
    })) as { session: { id: string } };
    const token = running.warren.tokens.mint(spawned.session.id, 0);
    const client = await stdioClient({ WARREN_TOKEN: token });
    assert.equal(client.getServerVersion()?.name, 'warren');
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('ipc_spawn') && !names.includes('streams_create'));
    const { fds } = structured<{ fds: Array<{ fd: number }> }>(
      await client.callTool({ name: 'ipc_list_fds', arguments: {} }),
    );
    assert.deepEqual(
      fds.map((f) => f.fd),
      [0, 1, 2],
    );
  });

  it('warren mcp with a bad credential gives the client a clear error, not a hang', async () => {
    await assert.rejects(stdioClient({ WARREN_TOKEN: 'wst_ses_nope.bad' }), /invalid session token|401/);
  });
});
