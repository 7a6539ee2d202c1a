import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorLine } from './error-line.ts';
import { refuseConnection } from './refuse-connection.ts';
import { UNIX_SOCKET_DEFAULTS, type UnixSocketLimits } from './socket-limits.ts';

/** A JSON-RPC server error (the implementation-defined range). */
const SERVER_ERROR = -32000;

/**
 * MCP over unix sockets: newline-delimited JSON-RPC like stdio, so `socat STDIO
 * UNIX-CONNECT:<path>` works as an MCP server command. One MCP server per connection, made
 * by `serverFor`; each socket is mode 0600 (its directory is the caller's to make 0700).
 * Used by the zone sockets (socket.ts) and the groups plugin's per-group sockets, whose
 * peers are agents: lines and connections are capped (`limits`), so what a socket can hold
 * is at most `maxConnections` × `maxLineBytes` (line-transport.ts).
 */
export class UnixMcpListeners {
  private servers = new Map<string, NetServer>();
  private conns = new Map<string, Set<Socket>>();

  constructor(private readonly limits: UnixSocketLimits = UNIX_SOCKET_DEFAULTS) {}

  has(path: string): boolean {
    return this.servers.has(path);
  }

  paths(): string[] {
    return [...this.servers.keys()];
  }

  /** Listen on `path` (a stale socket file there is removed first); no-op when already listening. */
  async listen(path: string, serverFor: () => Server | Promise<Server>): Promise<void> {
    if (this.servers.has(path)) return;
    rmSync(path, { force: true }); // a stale socket from a crashed server
    const conns = new Set<Socket>();
    const { maxConnections, maxLineBytes } = this.limits;
    const server = createServer((conn) => {
      conn.on('error', () => conn.destroy());
      if (conns.size >= maxConnections) {
        const why = `this socket has ${maxConnections} connections open, the most it takes: connection refused`;
        refuseConnection(conn, errorLine(SERVER_ERROR, why));
        return;
      }
      conns.add(conn);
      conn.once('close', () => conns.delete(conn));
      void serveConnection(conn, serverFor, maxLineBytes).catch(() => conn.destroy());
    });
    this.servers.set(path, server);
    this.conns.set(path, conns);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => resolve());
      });
      chmodSync(path, 0o600);
    } catch (error) {
      this.servers.delete(path);
      this.conns.delete(path);
      server.close();
      throw error;
    }
  }

  /** Stop listening on `path`, end its connections and remove the socket file. */
  async close(path: string): Promise<void> {
    const server = this.servers.get(path);
    if (!server) return;
    this.servers.delete(path);
    for (const c of this.conns.get(path) ?? []) c.destroy();
    this.conns.delete(path);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(path, { force: true });
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.paths().map((p) => this.close(p)));
  }
}

/**
 * One MCP server per connection, made when its first message arrives: a peer that never
 * finishes a line (or is closed for one too long) costs no server. The transport (and the
 * SDK) loads with the first connection.
 */
async function serveConnection(
  conn: Socket,
  serverFor: () => Server | Promise<Server>,
  maxLineBytes: number,
): Promise<void> {
  const { LineTransport } = await import('./line-transport.ts');
  if (conn.destroyed) return;
  const transport = new LineTransport(conn, maxLineBytes);
  // Until the server is connected; the SDK keeps calling this handler after its own, so it
  // must go quiet once the server has taken over.
  const early: JSONRPCMessage[] = [];
  let making = false;
  let live = false;
  transport.onmessage = (m) => {
    if (live) return;
    early.push(m);
    if (making) return;
    making = true;
    // Nothing more is read until the server is there to take it.
    conn.pause();
    void (async () => {
      const mcp = await serverFor();
      if (conn.destroyed) return void mcp.close().catch(() => {});
      conn.once('close', () => void mcp.close().catch(() => {}));
      await mcp.connect(transport);
      live = true;
      for (const message of early.splice(0)) transport.onmessage?.(message);
      conn.resume();
    })().catch(() => conn.destroy());
  };
  await transport.start();
}
