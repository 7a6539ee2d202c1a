import { z } from 'zod';
import type { PluginInstance } from '../../contract/plugin.ts';
import { defineSyscall, type SyscallContext } from '../../contract/syscall.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { principalId } from '../../vocab/principal.ts';
import type { RunnerHub } from './hub.ts';
import type { RunnersTable } from './schema.ts';
import type { RunnerTokens } from './tokens.ts';
import { CLOSE_REFUSED, environmentOf } from './wire.ts';

/** Runner tokens and the runners connected: operators only (CLI, REST; MCP for operator clients). */

export interface RunnersInstance extends PluginInstance {
  hub: RunnerHub;
  tokens: RunnerTokens;
}

const runners = (ctx: SyscallContext) => ctx.self as RunnersInstance;

const name = z.string().min(1).max(63).describe('The runner’s name (its environment is runner:<name>)');

const connection = z.object({
  id: z.string(),
  hostname: z.string(),
  pid: z.number(),
  runtimes: z.array(z.string()),
  cwdRoot: z.string().nullable(),
  connectedAt: z.number(),
  agents: z.array(z.string()),
});

const info = z.object({
  name: z.string(),
  environment: z.string(),
  status: z.enum(['online', 'offline', 'revoked']),
  connections: z.number(),
  runtimes: z.array(z.string()),
  agents: z.number(),
  createdAt: z.number(),
  createdBy: z.string(),
  lastConnectedAt: z.number().nullable(),
  revokedAt: z.number().nullable(),
});

function infoOf(hub: RunnerHub, r: RunnersTable) {
  const conns = r.revoked_at === null ? hub.connections(r.name) : [];
  return {
    name: r.name,
    environment: environmentOf(r.name),
    status:
      r.revoked_at !== null
        ? ('revoked' as const)
        : conns.length > 0
          ? ('online' as const)
          : ('offline' as const),
    connections: conns.length,
    runtimes: [...new Set(conns.flatMap((c) => c.info.runtimes))],
    agents: conns.reduce((n, c) => n + c.agents.size, 0),
    createdAt: Number(r.created_at),
    createdBy: r.created_by,
    lastConnectedAt: r.last_connected_at === null ? null : Number(r.last_connected_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  };
}

export const runnerTokenCreate = defineSyscall({
  name: 'runner_token_create',
  group: 'operator',
  summary: 'Create a runner and its token (shown once): `warren runner --token` connects with it',
  description:
    'A runner serves the environment runner:<name>. The token is stored hashed and shown only in this answer. rotate: replace the token of an existing (or revoked) runner; the old one stops working.',
  input: z.object({
    name,
    rotate: z.boolean().optional().describe('Replace the token of an existing runner'),
  }),
  output: z.object({ name: z.string(), environment: z.string(), token: z.string() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/runners' },
  cli: {
    command: ['runners', 'create-token'],
    positional: ['name'],
    examples: ['warren runners create-token gpu1', 'warren runners create-token gpu1 --rotate true'],
  },
  async handler(ctx, i) {
    const r = runners(ctx);
    const out = await r.tokens.create(i.name, principalId(ctx.principal), i.rotate === true);
    // A rotated token ends the connections that used the old one.
    if (i.rotate) r.hub.disconnect(i.name, CLOSE_REFUSED, 'token rotated');
    await r.hub.refresh();
    return { ...out, environment: environmentOf(out.name) };
  },
});

export const runnerList = defineSyscall({
  name: 'runner_list',
  group: 'operator',
  summary: 'List runners: online, offline or revoked, what they run, how many agents',
  input: z.object({}),
  output: z.object({ runners: z.array(info) }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/runners' },
  cli: { command: ['runners', 'list'], examples: ['warren runners list'] },
  async handler(ctx) {
    const r = runners(ctx);
    return { runners: (await r.tokens.list()).map((row) => infoOf(r.hub, row)) };
  },
});

export const runnerShow = defineSyscall({
  name: 'runner_show',
  group: 'operator',
  summary: 'One runner: its connections (host, pid, runtimes) and the sessions of its environment',
  input: z.object({ name }),
  output: info.extend({
    connectionList: z.array(connection),
    sessions: z.array(z.object({ id: z.string(), zone: z.string(), status: z.string() })),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/runners/:name' },
  cli: { command: ['runners', 'show'], positional: ['name'], examples: ['warren runners show gpu1'] },
  async handler(ctx, i) {
    const r = runners(ctx);
    const row = await r.tokens.get(i.name);
    if (!row)
      throw new WarrenError('not_found', `runner ${JSON.stringify(i.name)} does not exist`, { name: i.name });
    const sessions = await ctx.kernel.environmentSessions(environmentOf(i.name), 500);
    return {
      ...infoOf(r.hub, row),
      connectionList: (row.revoked_at === null ? r.hub.connections(i.name) : []).map((c) => ({
        id: c.id,
        hostname: c.info.hostname,
        pid: c.info.pid,
        runtimes: c.info.runtimes,
        cwdRoot: c.info.cwdRoot,
        connectedAt: c.connectedAt,
        agents: [...c.agents.keys()],
      })),
      sessions,
    };
  },
});

export const runnerRevoke = defineSyscall({
  name: 'runner_revoke',
  group: 'operator',
  summary: 'Revoke a runner’s token: it is disconnected and refused; its sessions are suspended',
  input: z.object({ name }),
  output: z.object({ name: z.string(), revokedAt: z.number(), disconnected: z.number() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/runners/:name/revoke' },
  cli: { command: ['runners', 'revoke'], positional: ['name'], examples: ['warren runners revoke gpu1'] },
  async handler(ctx, i) {
    const r = runners(ctx);
    const row = await r.tokens.revoke(i.name, principalId(ctx.principal));
    const n = r.hub.connections(i.name).length;
    r.hub.disconnect(i.name, CLOSE_REFUSED, 'runner revoked');
    await r.hub.refresh();
    return { name: i.name, revokedAt: Number(row.revoked_at), disconnected: n };
  },
});

export const runnerSyscalls = [runnerTokenCreate, runnerList, runnerShow, runnerRevoke];
