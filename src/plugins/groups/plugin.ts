import { join, resolve } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { definePlugin } from '../../contract/plugin.ts';
import type { Syscall } from '../../contract/syscall.ts';
import type { LogEvent } from '../../store/events.ts';
import { scheduleSyscalls } from '../scheduling/syscalls.ts';
import { GroupAgents } from './agents.ts';
import { Inbound } from './inbound.ts';
import { groupsMigrations } from './migrations.ts';
import type { GroupsDb } from './schema.ts';
import { GroupSockets } from './sockets.ts';
import type { GroupsInstance } from './syscalls/common.ts';
import { groupSyscalls } from './syscalls/index.ts';
import { GROUP_TOOLS } from './tiers.ts';
import { toolOf } from './tools.ts';
import { groupsWorkDir } from './workdir.ts';

const settings = z
  .object({
    dataDir: z.string().min(1).optional(),
    /** Routes a group may hold targeting its subtree (operators: no cap). */
    maxRoutesPerGroup: z.number().int().min(1).optional(),
    /** Where group agents work (`<workDir>/<folder>`); never inside the data dir. */
    workDir: z.string().min(1).optional(),
    maxDocumentBytes: z
      .number()
      .int()
      .min(1)
      .max(1024 ** 3)
      .optional(),
  })
  .strict();

const DEFAULT_MAX_DOCUMENT = 20 * 1024 * 1024;
const DEFAULT_MAX_ROUTES = 100;
const LIVE_TO = new Set(['pending', 'running', 'idle']);

/**
 * Groups (seed 002): a tree of folders whose agents are warren sessions, each with an MCP
 * socket at `<data-dir>/ipc/<folder>/router.sock` while its agent lives; the caller's group
 * is the socket's, its tools its tier's narrowed by its grant rules. Routes send inbound
 * chat messages to groups. See docs/groups.md.
 */
export const groupsPlugin = definePlugin<z.output<typeof settings> | undefined, GroupsDb>({
  name: 'groups',
  version: '0.1.0',
  summary: 'agent groups in a folder tree with per-group MCP sockets, routes and inbound messages (seed 002)',
  dependsOn: ['scheduling'],
  migrations: groupsMigrations,
  syscalls: groupSyscalls,
  config: settings.optional(),
  async start({ kernel, tables, call, log, config, dataDir }): Promise<GroupsInstance> {
    const base = resolve(config?.dataDir ?? dataDir ?? '.warren');
    // The 20 tools' definitions: this plugin's and the scheduler's arizuko names.
    let tools: Map<string, Tool> | undefined;
    const defs = (): ReadonlyMap<string, Tool> => {
      const all = new Map<string, Syscall>([...groupSyscalls, ...scheduleSyscalls].map((s) => [s.name, s]));
      tools ??= new Map(GROUP_TOOLS.map((n) => [n, toolOf(all.get(n)!)]));
      return tools;
    };
    const sockets = new GroupSockets(
      join(base, 'ipc'),
      defs,
      call,
      { error: (obj, msg) => log.error(obj, msg) },
      kernel.config.sockets,
    );
    const agents = new GroupAgents(
      kernel,
      tables,
      sockets,
      groupsWorkDir(base, config?.workDir),
      join(base, 'groups'),
    );
    const inbound = new Inbound(kernel, tables, agents);
    const reader = tables.reader;

    /** Sockets follow their agents: a group session that ends or is suspended closes it; one that comes back opens it. */
    const onStatus = (events: readonly LogEvent[]) => {
      for (const e of events) {
        if (e.type !== 'session.status' || !e.session_id) continue;
        const to = (e.payload as { to?: string }).to ?? '';
        const from = (e.payload as { from?: string }).from ?? '';
        if (LIVE_TO.has(to) && LIVE_TO.has(from)) continue;
        const id = e.session_id;
        void reader
          .selectFrom('groups')
          .selectAll()
          .where('session_id', '=', id)
          .executeTakeFirst()
          .then((row) => (row ? agents.sync(row) : undefined))
          .catch((err: unknown) => log.error({ err, session: id }, 'groups: socket sync failed'));
      }
    };
    /** After a restart (and as a repair): every group with a session gets the socket its agent's state calls for. */
    const syncAll = async () => {
      const rows = await reader
        .selectFrom('groups')
        .selectAll()
        .where('session_id', 'is not', null)
        .execute();
      for (const r of rows) await agents.sync(r);
      for (const f of sockets.openFolders()) if (!rows.some((r) => r.folder === f)) await sockets.close(f);
    };
    await syncAll();
    return {
      agents,
      sockets,
      inbound,
      tables,
      maxDocumentBytes: config?.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT,
      maxRoutesPerGroup: config?.maxRoutesPerGroup ?? DEFAULT_MAX_ROUTES,
      phases: [{ name: 'sockets', run: syncAll, scope: 'node' }],
      onCommit: onStatus,
      // Routes may change on any node: every node's compiled routes must follow.
      onAnyCommit: (events) => inbound.onCommit(events),
      async stop() {
        await agents.settled();
        await sockets.closeAll();
      },
    };
  },
});
