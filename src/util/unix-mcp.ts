import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';

/**
 * MCP over unix sockets: newline-delimited JSON-RPC like stdio, so `socat STDIO
 * UNIX-CONNECT:<path>` works as an MCP server command. One MCP server per connection, made
 * by `serverFor`; each socket is mode 0600 (its directory is the caller's to make 0700).
 * Used by the zone sockets (socket.ts) and the groups plugin's per-group sockets.
 */
export class UnixMcpListeners {
  private servers = new Map<string, NetServer>();
  private conns = new Map<string, Set<Socket>>();

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
    const server = createServer((conn) => {
      conns.add(conn);
      conn.on('error', () => conn.destroy());
      void serveConnection(conn, conns, serverFor).catch(() => conn.destroy());
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

/** One MCP server per connection; the SDK's stdio transport loads with the first one. */
async function serveConnection(
  conn: Socket,
  conns: Set<Socket>,
  serverFor: () => Server | Promise<Server>,
): Promise<void> {
  const [{ StdioServerTransport }, mcp] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    serverFor(),
  ]);
  const closed = () => {
    conns.delete(conn);
    void mcp.close().catch(() => {});
  };
  if (conn.destroyed) return closed();
  conn.on('close', closed);
  await mcp.connect(new StdioServerTransport(conn, conn));
}
