/**
 * MCP tool-call overhead: an `ipc_write` round trip through warren's MCP surface, over
 * Streamable HTTP and over the zone's unix socket, against the MCP SDK's bare server on the
 * same transports, measured in the same run, with two tools: a no-op (the difference is all
 * warren adds: auth, gating, validation, the kernel write and its durable commit) and the
 * honest floor (issue 8): one raw better-sqlite3 insert into a table identical to `events`,
 * committed, with the store's pragmas. Goal: `ipc_write` within 1.3× of the floor.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';
import { serve } from '../src/app/server.ts';
import { isolatingFetch } from '../src/surfaces/mcp/client-fetch.ts';
import { SocketClientTransport } from '../test/helpers/mcp.ts';
import { eventsDdl, sqliteFloor } from './lib/floor.ts';
import type { BenchRow } from './store.ts';

const CALLS = 1000;
const WARMUP = 500;
/** Each case's calls come in this many rounds, the cases taking turns: drift (load, JIT) hits all alike. */
const ROUNDS = 5;

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Calls not timed: the JIT has seen the path before any case is measured. */
async function warm(client: Client, name: string, args: () => Record<string, unknown>): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await client.callTool({ name, arguments: args() });
}

/** `calls` sequential calls; the latency of each, in call order. */
async function timeCalls(
  client: Client,
  name: string,
  args: () => Record<string, unknown>,
  calls: number,
): Promise<number[]> {
  const lat: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    const r = (await client.callTool({ name, arguments: args() })) as {
      isError?: boolean;
      content: Array<{ text?: string }>;
    };
    lat.push(performance.now() - t);
    if (r.isError) throw new Error(`${name} failed: ${r.content[0]?.text}`);
  }
  return lat;
}

async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  return client;
}

/** The SDK's bare server: one no-op tool, on Streamable HTTP and on a unix socket. */
async function bareServers(dir: string, ddl: readonly string[]) {
  const floor = sqliteFloor(join(dir, 'floor.db'), ddl);
  const make = () => {
    const s = new McpServer({ name: 'bare', version: '0' });
    s.registerTool('noop', { inputSchema: { message: z.string() } }, async ({ message }) => ({
      content: [{ type: 'text', text: message.length.toString() }],
    }));
    s.registerTool('insert', { inputSchema: { message: z.string() } }, async ({ message }) => ({
      content: [{ type: 'text', text: String(floor.append(message)) }],
    }));
    return s;
  };
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sid = req.headers['mcp-session-id'];
    let t = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (!t) {
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, created);
        },
      });
      t = created;
      await make().connect(t);
    }
    await t.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  const sock = join(dir, 'bare.sock');
  const net = createNetServer((conn) => void make().connect(new StdioServerTransport(conn, conn)));
  await new Promise<void>((r) => net.listen(sock, () => r()));
  return {
    url: `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`,
    sock,
    async close() {
      for (const t of transports.values()) await t.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
      await new Promise<void>((r) => net.close(() => r()));
      floor.close();
    },
  };
}

export async function mcpToolCall(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-mcp-'));
  const running = await serve(
    { host: '127.0.0.1', port: 0, dataDir: dir, durability: 'process', demo: false },
    { write: () => true },
  );
  const ddl = eventsDdl(join(dir, 'warren.db'));
  const bare = await bareServers(dir, ddl);
  const surfaceFloor = sqliteFloor(join(dir, 'surface-floor.db'), ddl);
  const clients: Client[] = [];
  try {
    const key = readFileSync(join(dir, 'operator.key'), 'utf8').trim();
    const http = await connect(
      new StreamableHTTPClientTransport(new URL(`${running.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        fetch: isolatingFetch(),
      }),
    );
    const socket = await connect(new SocketClientTransport(running.sockets.paths()[0]!));
    const bareHttp = await connect(
      new StreamableHTTPClientTransport(new URL(bare.url), { fetch: isolatingFetch() }),
    );
    const bareSocket = await connect(new SocketClientTransport(bare.sock));
    clients.push(http, socket, bareHttp, bareSocket);

    const roomOf = async (c: Client, name: string) =>
      (
        (await c.callTool({ name: 'streams_create', arguments: { name, selfEcho: false } })) as unknown as {
          structuredContent: { fd: number };
        }
      ).structuredContent.fd;
    const httpFd = await roomOf(http, 'bench-http');
    const sockFd = await roomOf(socket, 'bench-socket');
    let n = 0;
    const msg = () => `message ${++n} of the MCP bench, a line of ordinary length`;

    // The surface alone: the same calls with the kernel's write swapped for the floor's insert,
    // so what is left over the floor is the MCP path's own (transports, auth, dispatch), not
    // the write unit's.
    const kernel = running.warren.kernel;
    const realWrite = kernel.write;
    const floorWrite: typeof realWrite = async (_p, _fd, text) => ({ seq: surfaceFloor.append(text) });
    const cases: Array<{
      name: string;
      client: Client;
      tool: string;
      args: () => Record<string, unknown>;
      swap?: true;
    }> = [
      {
        name: 'MCP ipc_write, Streamable HTTP',
        client: http,
        tool: 'ipc_write',
        args: () => ({ fd: httpFd, message: msg() }),
      },
      {
        name: 'MCP bare SDK no-op, Streamable HTTP',
        client: bareHttp,
        tool: 'noop',
        args: () => ({ message: msg() }),
      },
      {
        name: 'MCP ipc_write, unix socket',
        client: socket,
        tool: 'ipc_write',
        args: () => ({ fd: sockFd, message: msg() }),
      },
      {
        name: 'MCP bare SDK no-op, unix socket',
        client: bareSocket,
        tool: 'noop',
        args: () => ({ message: msg() }),
      },
      {
        name: 'MCP bare SDK one insert, Streamable HTTP',
        client: bareHttp,
        tool: 'insert',
        args: () => ({ message: msg() }),
      },
      {
        name: 'MCP bare SDK one insert, unix socket',
        client: bareSocket,
        tool: 'insert',
        args: () => ({ message: msg() }),
      },
      {
        name: 'MCP surface, Streamable HTTP',
        client: http,
        tool: 'ipc_write',
        args: () => ({ fd: httpFd, message: msg() }),
        swap: true,
      },
      {
        name: 'MCP surface, unix socket',
        client: socket,
        tool: 'ipc_write',
        args: () => ({ fd: sockFd, message: msg() }),
        swap: true,
      },
    ];
    const measured = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    try {
      // Every case warms up before any is timed (the code they share, the SDK, undici and zod,
      // warms up once for all), then the cases take turns, a round at a time.
      for (const c of cases) {
        kernel.write = c.swap ? floorWrite : realWrite;
        await warm(c.client, c.tool, c.args);
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (const c of cases) {
          kernel.write = c.swap ? floorWrite : realWrite;
          measured.get(c.name)!.push(...(await timeCalls(c.client, c.tool, c.args, CALLS / ROUNDS)));
        }
      }
    } finally {
      kernel.write = realWrite;
    }
    for (const lat of measured.values()) lat.sort((a, b) => a - b);

    const rows: BenchRow[] = [];
    for (const transport of ['Streamable HTTP', 'unix socket']) {
      const w = measured.get(`MCP ipc_write, ${transport}`)!;
      const b = measured.get(`MCP bare SDK no-op, ${transport}`)!;
      for (const p of [50, 99]) {
        const value = percentile(w, p);
        const baseline = percentile(b, p);
        rows.push({
          name: `MCP ipc_write round trip p${p}, ${transport}`,
          value,
          unit: 'ms',
          baseline,
          ratio: value / baseline,
          note: `${CALLS} sequential calls in ${ROUNDS} rounds, the cases taking turns; baseline: the SDK's bare server, a no-op tool, same transport`,
        });
      }
      const floor = measured.get(`MCP bare SDK one insert, ${transport}`)!;
      for (const p of [50, 99]) {
        const value = percentile(w, p);
        const baseline = percentile(floor, p);
        rows.push({
          name: `MCP ipc_write vs one durable insert p${p}, ${transport}`,
          value,
          unit: 'ms',
          baseline,
          ratio: value / baseline,
          ...(p === 50 ? { max: baseline * 1.3 } : {}),
          note: `${CALLS} sequential calls; baseline: the SDK's bare server, a tool doing one better-sqlite3 insert + commit (WAL, synchronous=NORMAL, the events table's DDL)${p === 50 ? '; goal ≤ 1.3×' : ''}`,
        });
      }
      const surface = measured.get(`MCP surface, ${transport}`)!;
      const value = percentile(surface, 50);
      const baseline = percentile(floor, 50);
      rows.push({
        name: `MCP surface alone vs one durable insert p50, ${transport}`,
        value,
        unit: 'ms',
        baseline,
        ratio: value / baseline,
        note: `ipc_write with the kernel's write swapped for the floor's insert: the MCP path without the write unit; baseline as above`,
      });
      const total = w.reduce((s, x) => s + x, 0);
      rows.push({
        name: `MCP ipc_write calls/s (one client), ${transport}`,
        value: (CALLS / total) * 1000,
        unit: 'calls/s',
      });
    }
    return rows;
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await bare.close();
    surfaceFloor.close();
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const mcpBenches = { mcpToolCall };

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await mcpToolCall()) {
    console.log(
      `${r.name.padEnd(48)} ${r.value.toFixed(3).padStart(9)} ${r.unit.padEnd(7)} ${r.baseline !== undefined ? `baseline ${r.baseline.toFixed(3)}  ratio ${r.ratio?.toFixed(2)}` : ''}`,
    );
  }
}
