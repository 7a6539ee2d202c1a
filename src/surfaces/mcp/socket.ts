import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Principal } from '../../kernel/principal.ts';
import type { Warren } from '../../warren.ts';
import type { ToolCatalog } from './catalog.ts';

/** The name of the operator a zone's socket speaks for. */
export const SOCKET_OPERATOR = 'local';

export const socketPath = (dir: string, zone: string) => join(dir, `${zone}.sock`);

/**
 * MCP over a unix socket per zone (`<dir>/<zone>.sock`, mode 0600, newline-delimited
 * JSON-RPC like stdio, so `socat STDIO UNIX-CONNECT:…` works). The caller's zone and
 * identity come from the socket: whoever can open it is that zone's local operator.
 */
export class ZoneSockets {
  private servers = new Map<string, NetServer>();
  private conns = new Set<Socket>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly warren: Warren,
    private readonly catalog: ToolCatalog,
    private readonly dir: string,
  ) {}

  /** A socket for every zone, now and as zones are created. */
  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const zones = await this.warren.store.reader.selectFrom('zones').select('id').execute();
    for (const z of zones) await this.listen(z.id);
    this.unsubscribe = this.warren.store.writer.onAnyCommit((events) => {
      for (const e of events) if (e.type === 'zone.created') void this.listen(e.zone);
    });
  }

  paths(): string[] {
    return [...this.servers.keys()].map((z) => socketPath(this.dir, z));
  }

  private async listen(zone: string): Promise<void> {
    if (this.servers.has(zone)) return;
    const path = socketPath(this.dir, zone);
    rmSync(path, { force: true }); // a stale socket from a crashed server
    const principal: Principal = { kind: 'operator', name: SOCKET_OPERATOR, zone };
    const server = createServer((conn) => {
      this.conns.add(conn);
      conn.on('error', () => conn.destroy());
      void this.serveConnection(conn, principal).catch(() => conn.destroy());
    });
    this.servers.set(zone, server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    chmodSync(path, 0o600);
  }

  /** One MCP server per connection; the SDK loads with the first one, not with the server. */
  private async serveConnection(conn: Socket, principal: Principal): Promise<void> {
    const [{ StdioServerTransport }, { createMcpServer }] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('./server.ts'),
    ]);
    const mcp = createMcpServer(this.warren, this.catalog, principal);
    const closed = () => {
      this.conns.delete(conn);
      void mcp.close().catch(() => {});
    };
    if (conn.destroyed) return closed();
    conn.on('close', closed);
    await mcp.connect(new StdioServerTransport(conn, conn));
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    for (const c of this.conns) c.destroy();
    await Promise.all(
      [...this.servers.entries()].map(
        ([zone, s]) =>
          new Promise<void>((resolve) =>
            s.close(() => {
              rmSync(socketPath(this.dir, zone), { force: true });
              resolve();
            }),
          ),
      ),
    );
    this.servers.clear();
  }
}
