import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { KeyedQueue } from '../../util/keyed-queue.ts';
import type { UnixSocketLimits } from '../../util/socket-limits.ts';
import { UnixMcpListeners } from '../../util/unix-mcp.ts';
import { invalid } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import type { ErrorLog } from '../../vocab/public-error.ts';
import { groupPrincipal } from './actor.ts';
import { checkFolder, depthOf } from './names.ts';
import { rulesOf } from './registry.ts';
import type { GroupsTable } from './schema.ts';
import { toolsOf } from './tiers.ts';

/** Room in `sockaddr_un.sun_path` (108 bytes with its NUL on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 103;

type Call = (p: Principal, name: string, input: unknown) => Promise<unknown>;

/**
 * A socket per group with a live agent, at `<ipc dir>/<folder>/router.sock` (directories
 * 0700, socket 0600). Open while its agent lives (Start before the agent, Stop when it
 * ends); what it serves is computed when it opens. Holds nothing else: a server restarted
 * between invocations opens the sockets of the agents that are live again.
 */
export class GroupSockets {
  private readonly listeners: UnixMcpListeners;
  /** Per folder, the open or close in flight: they must not interleave. */
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly ipcDir: string,
    private readonly tools: () => ReadonlyMap<string, Tool>,
    private readonly call: Call,
    private readonly log: ErrorLog,
    limits: UnixSocketLimits,
  ) {
    this.listeners = new UnixMcpListeners(limits);
  }

  pathOf(folder: string): string {
    checkFolder(folder);
    const path = join(this.ipcDir, ...folder.split('/'), 'router.sock');
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
      throw invalid(
        `group ${folder}: its socket path ${path} is over ${MAX_SOCKET_PATH} bytes (use a shorter data dir)`,
        {
          field: 'folder',
        },
      );
    }
    return path;
  }

  isOpen(folder: string): boolean {
    return this.listeners.has(this.pathOf(folder));
  }

  open(row: GroupsTable): Promise<void> {
    return this.queue.run(row.folder, async () => {
      const path = this.pathOf(row.folder);
      if (this.listeners.has(path)) return;
      mkdirSync(this.ipcDir, { recursive: true, mode: 0o700 });
      let dir = this.ipcDir;
      for (const part of row.folder.split('/')) {
        dir = join(dir, part);
        mkdirSync(dir, { recursive: true, mode: 0o700 });
      }
      const depth = depthOf(row.folder);
      const rules = rulesOf(row);
      const all = this.tools();
      const spec = {
        folder: row.folder,
        depth,
        rules,
        principal: groupPrincipal(row.folder, row.zone),
        tools: toolsOf(depth, rules).flatMap((t) => (all.has(t) ? [all.get(t)!] : [])),
      };
      await this.listeners.listen(path, async () =>
        (await import('./mcp.ts')).groupMcpServer(spec, this.call, this.log),
      );
    });
  }

  close(folder: string): Promise<void> {
    return this.queue.run(folder, () => this.listeners.close(this.pathOf(folder)));
  }

  /** Folders with an open socket. */
  openFolders(): string[] {
    const prefix = `${this.ipcDir}/`;
    return this.listeners.paths().map((p) => p.slice(prefix.length, -'/router.sock'.length));
  }

  async closeAll(): Promise<void> {
    await this.queue.settled();
    await this.listeners.closeAll();
  }
}
