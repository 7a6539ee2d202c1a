import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { PluginTables } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import { KeyedQueue } from '../../util/keyed-queue.ts';
import { invalid, WarrenError } from '../../vocab/errors.ts';
import { operator, type Principal } from '../../vocab/principal.ts';
import { spawnInput, spawnRequestOf } from '../core/ipc.ts';
import { agentOf, groupIn } from './registry.ts';
import type { GroupsDb, GroupsTable } from './schema.ts';
import type { GroupSockets } from './sockets.ts';
import { moveOldFolder } from './workdir.ts';

/** What a group's agent is spawned with: ipc_spawn's input, less the prompt (each start brings its own). */
export const agentSpec = spawnInput.omit({ prompt: true, idempotencyKey: true });

/** The chat a delivered message came from (send_reply answers it). */
export interface Chat {
  platform: string;
  room: string;
  chat_jid: string;
  sender: string;
}

export type DeliveryHow = 'sent' | 'resumed' | 'started';
const LIVE = new Set(['pending', 'running', 'idle']);

/** The name of the group socket's MCP server in a Claude Code agent's settings (the seed's). */
export const MCP_SERVER = 'arizuko';

/** The operator a group's agents are spawned and written to by. */
export const GROUPS_OPERATOR = 'groups';

/**
 * A group's agent: a warren session in the group's zone, spawned by the `groups` operator
 * from the group's agent spec (its own or its nearest ancestor's), working in the group's
 * folder. One at a time per group; deliveries to a group are serialised so two messages
 * never start two agents.
 */
export class GroupAgents {
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly kernel: Kernel,
    private readonly tables: PluginTables<GroupsDb>,
    private readonly sockets: GroupSockets,
    private readonly groupsDir: string,
    /** Where group agents worked before issue 25 (`<data-dir>/groups`): moved from, lazily. */
    private readonly oldGroupsDir: string | null = null,
  ) {}

  dirOf(folder: string): string {
    return join(this.groupsDir, ...folder.split('/'));
  }

  private actor(zone: string): Principal {
    return operator(GROUPS_OPERATOR, zone);
  }

  /** Give `text` to the group's agent: to its live session, reanimating a suspended one, else a new one. */
  deliver(
    zone: string,
    folder: string,
    text: string,
    chat?: Chat,
  ): Promise<{ sessionId: string; how: DeliveryHow }> {
    return this.queue.run(folder, async () => {
      const row = await groupIn(this.tables.reader, zone, folder);
      if (chat) {
        await this.tables.write(async (tx) => {
          await tx.db
            .updateTable('groups')
            .set({ last_chat: JSON.stringify(chat), updated_at: tx.now })
            .where('folder', '=', folder)
            .execute();
        });
      }
      const me = this.actor(zone);
      const current = row.session_id ? await this.statusOf(me, row.session_id) : null;
      if (row.session_id && current && LIVE.has(current)) {
        await this.kernel.send(me, row.session_id, text);
        return { sessionId: row.session_id, how: 'sent' as const };
      }
      if (row.session_id && current === 'suspended') {
        await this.sockets.open(row);
        await this.kernel.resume(me, row.session_id);
        await this.kernel.send(me, row.session_id, text);
        return { sessionId: row.session_id, how: 'resumed' as const };
      }
      const id = await this.start(row);
      await this.kernel.send(me, id, text);
      return { sessionId: id, how: 'started' as const };
    });
  }

  /**
   * Start the group's agent afresh: its socket first (the agent connects at once). It starts
   * with no prompt: every message, the first too, reaches it on its stdin, whose transcript
   * is then the group's conversation.
   */
  private async start(row: GroupsTable): Promise<string> {
    const spec = await agentOf(this.tables.reader, row);
    if (!spec) {
      throw invalid(`group ${row.folder} has no agent: register it (or an ancestor) with agent`, {
        field: 'agent',
      });
    }
    const parsed = agentSpec.safeParse(spec);
    if (!parsed.success)
      throw invalid(`group ${row.folder}: its agent spec is invalid: ${z.prettifyError(parsed.error)}`);
    const dir = this.dirOf(row.folder);
    // A fresh start is the moment no agent works in the group's old folder: move it over.
    if (this.oldGroupsDir) moveOldFolder(join(this.oldGroupsDir, ...row.folder.split('/')), dir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const socket = this.sockets.pathOf(row.folder);
    const req = spawnRequestOf(parsed.data);
    req.title ??= `group ${row.folder}`;
    req.cwd ??= dir;
    req.env = { ...req.env, WARREN_GROUP: row.folder, WARREN_GROUP_SOCKET: socket };
    // Claude Code gets seed 002's MCP entry for it: `arizuko`, `socat STDIO UNIX-CONNECT:<socket>`.
    if (req.runtime === 'claude-code') {
      const sockets = (req.config?.mcpSockets ?? {}) as Record<string, string>;
      req.config = { ...req.config, mcpSockets: { ...sockets, [MCP_SERVER]: socket } };
    }
    await this.sockets.open(row);
    try {
      // The session is the group's in the spawn's own transaction: its end finds the group.
      const r = await this.kernel.spawnWith(this.tables, this.actor(row.zone), req, async (tx, s) => {
        await tx.db
          .updateTable('groups')
          .set({ session_id: s.session.id, updated_at: tx.now })
          .where('folder', '=', row.folder)
          .execute();
        tx.append({
          zone: row.zone,
          type: 'group.agent_started',
          actor: `operator:${GROUPS_OPERATOR}`,
          session_id: s.session.id,
          payload: { folder: row.folder, socket },
        });
      });
      if (!LIVE.has(r.session.status)) await this.sockets.close(row.folder);
      return r.session.id;
    } catch (error) {
      await this.sockets.close(row.folder);
      throw error;
    }
  }

  /** Forget the group's session (its log stays) and end it; the next message starts a new one. */
  clear(zone: string, folder: string, by: string): Promise<string | null> {
    return this.queue.run(folder, async () => {
      const row = await groupIn(this.tables.reader, zone, folder);
      const old = row.session_id;
      await this.tables.write(async (tx) => {
        await tx.db
          .updateTable('groups')
          .set({ session_id: null, updated_at: tx.now })
          .where('folder', '=', folder)
          .execute();
        tx.append({ zone, type: 'group.cleared', actor: by, session_id: old, payload: { folder } });
      });
      // Ended (socket and session) after the answer: the caller may be that very agent,
      // asking through its socket.
      const me = this.actor(zone);
      setImmediate(() => {
        if (old) void this.kernel.kill(me, old, { graceful: true }).catch(() => {});
        // Through the queue, so a message that started a new agent meanwhile keeps its socket.
        void this.queue
          .run(folder, async () => this.sync(await groupIn(this.tables.reader, zone, folder)))
          .catch(() => {});
      });
      return old;
    });
  }

  /** Open or close a group's socket to match its agent's state. */
  async sync(row: GroupsTable): Promise<void> {
    const status = row.session_id ? await this.statusOf(this.actor(row.zone), row.session_id) : null;
    if (status && LIVE.has(status)) await this.sockets.open(row);
    else if (this.sockets.isOpen(row.folder)) await this.sockets.close(row.folder);
  }

  private async statusOf(me: Principal, id: string): Promise<string | null> {
    try {
      return (await this.kernel.session(me, id)).status;
    } catch (error) {
      if (error instanceof WarrenError && error.code === 'not_found') return null;
      throw error;
    }
  }

  settled(): Promise<void> {
    return this.queue.settled();
  }
}
