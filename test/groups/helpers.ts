import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { GroupsInstance } from '../../src/plugins/groups/syscalls/common.ts';
import type { StoreLocation } from '../../src/store/dialect.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { SocketClientTransport } from '../helpers/mcp.ts';
import { needs } from '../helpers/system-tools.ts';
import { call, idleScript, until, type WarrenTarget } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs are checked by their own schemas
export type Any = any;

export const SOCAT = '/usr/bin/socat';
/** The skip value of the tests that run the seed's socat entry (system-tools.ts). */
export const socatSkip = (): string | false => needs(SOCAT);

/** A short data dir (socket paths are capped near 104 bytes), removed after the file's tests. */
export function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wg-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    // Group agents work beside the data dir (src/plugins/groups/workdir.ts).
    rmSync(`${dir}-groups`, { recursive: true, force: true });
  });
  return dir;
}

/** A warren with the groups plugin writing under its own data dir. */
export async function openGroups(
  t: WarrenTarget,
  dir = dataDir(),
  location?: StoreLocation,
): Promise<{ w: Warren; dir: string }> {
  const w = await t.open({
    ...(location ? { location } : {}),
    plugins: { config: { groups: { dataDir: dir, maxDocumentBytes: 1024 } } },
  });
  return { w, dir };
}

export const groupsOf = (w: Warren) => w.plugins.get<GroupsInstance>('groups');
export const socketOf = (dir: string, folder: string) =>
  join(dir, 'ipc', ...folder.split('/'), 'router.sock');

/** An agent that lives until it is ended. */
export const idleAgent = { script: idleScript };

/** Register main, main/a, main/a/b, main/a/b/c (tiers 0..3); main has the agent, the rest inherit it. */
export async function tree(w: Warren, agent: Record<string, unknown> = idleAgent): Promise<string[]> {
  const folders = ['main', 'main/a', 'main/a/b', 'main/a/b/c'];
  await call(w, 'register_group', { folder: 'main', agent });
  for (const f of folders.slice(1)) await call(w, 'register_group', { folder: f });
  return folders;
}

/** Start a group's agent and wait for its socket. */
export async function start(w: Warren, dir: string, folder: string, prompt = 'hello'): Promise<Any> {
  const r = await call(w, 'spawn_group', { folder, prompt });
  await until(() => existsSync(socketOf(dir, folder)), 15_000, `${folder}'s socket`);
  return r;
}

/** An MCP client on a group's socket (closed after the file's tests). */
export async function socketClient(path: string): Promise<Client> {
  const c = new Client({ name: 'groups-test', version: '0.0.0' });
  await c.connect(new SocketClientTransport(path));
  after(() => c.close().catch(() => {}));
  return c;
}

/** The seed's MCP entry, run for real: `socat STDIO UNIX-CONNECT:<socket>` as the server command. */
export async function socatClient(path: string): Promise<Client> {
  const c = new Client({ name: 'groups-socat', version: '0.0.0' });
  await c.connect(
    new StdioClientTransport({ command: SOCAT, args: ['STDIO', `UNIX-CONNECT:${path}`], stderr: 'ignore' }),
  );
  after(() => c.close().catch(() => {}));
  return c;
}

export const names = async (c: Client): Promise<string[]> =>
  (await c.listTools()).tools.map((t) => t.name).sort();

/** What a session's agent was given on stdin, oldest first. */
export async function inputs(w: Warren, sessionId: string): Promise<string[]> {
  const r = await call(w, 'streams_transcript', { stream: `stdin:${sessionId}`, limit: 1000 });
  return (r.messages as Any[]).map((m) => m.text as string).reverse();
}

/** A tool call's error (code and message), or null when it succeeded. */
export function errorOf(r: Any): { code: string; message: string } | null {
  return r.isError ? (r.structuredContent.error as { code: string; message: string }) : null;
}
