import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Warren } from '../../syscalls/warren.ts';
import { UnixMcpListeners } from '../../util/unix-mcp.ts';
import type { Principal } from '../../vocab/principal.ts';
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
  private readonly listeners: UnixMcpListeners;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly warren: Warren,
    private readonly catalog: ToolCatalog,
    private readonly dir: string,
  ) {
    this.listeners = new UnixMcpListeners(warren.kernel.config.sockets);
  }

  /** A socket for every zone, now and as zones are created. */
  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    for (const zone of await this.warren.kernel.zoneIds()) await this.listen(zone);
    this.unsubscribe = this.warren.onAnyCommit((events) => {
      for (const e of events) if (e.type === 'zone.created') void this.listen(e.zone);
    });
  }

  paths(): string[] {
    return this.listeners.paths();
  }

  private async listen(zone: string): Promise<void> {
    const principal: Principal = { kind: 'operator', name: SOCKET_OPERATOR, zone };
    // The MCP server module (and the SDK) load with the first connection, not with the server.
    await this.listeners.listen(socketPath(this.dir, zone), async () =>
      (await import('./server.ts')).createMcpServer(this.warren, this.catalog, principal),
    );
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.listeners.closeAll();
  }
}
