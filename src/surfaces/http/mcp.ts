import { randomUUID } from 'node:crypto';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MCP_SESSION_DEFAULTS } from '../../config/defaults.ts';
import type { Warren } from '../../syscalls/warren.ts';
import { principalId } from '../../vocab/principal.ts';
import type { ErrorLog } from '../../vocab/public-error.ts';
import type { ToolCatalog } from '../mcp/catalog.ts';
import { parseGroups } from '../mcp/tool-groups.ts';
import { principalOf } from './auth.ts';
import { McpSessions } from './mcp-sessions.ts';

/** A JSON-RPC `initialize` request (the SDK's transport checks the rest of it). */
const isInitialize = (body: unknown): boolean => {
  const b = body as { jsonrpc?: unknown; method?: unknown; id?: unknown } | null;
  return (
    !!b && typeof b === 'object' && b.jsonrpc === '2.0' && b.method === 'initialize' && b.id !== undefined
  );
};

export interface McpHttpOptions {
  /** Host names accepted in Host and Origin besides loopback (for a server bound elsewhere). */
  allowedHosts?: readonly string[];
  /** Sessions with no request open this long are closed (default 60 s; config `mcp.idleMs`). */
  idleMs?: number;
  /** Open MCP sessions one credential may hold at once (default 32; config `mcp.maxSessionsPerCaller`). */
  maxSessionsPerCaller?: number;
  /** How often long calls report progress. */
  progressEveryMs?: number;
}

/** Distinct allowed Host headers remembered (a port each, say); past it they are parsed each time. */
const MAX_REMEMBERED_HOSTS = 64;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The hostname of a Host header or Origin URL, or null if it cannot be read. */
function hostnameOf(value: string, isOrigin: boolean): string | null {
  try {
    return new URL(isOrigin ? value : `http://${value}`).hostname;
  } catch {
    return null;
  }
}

const rpcError = (
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
  data?: Record<string, unknown>,
) =>
  reply.status(status).send({
    jsonrpc: '2.0',
    error: { code, message, data: { ...data, requestId: reply.request.id } },
    id: null,
  });

/** The tool groups a `/mcp?tools=a,b` asks for (query only: a header would need a client that can send one). */
function toolsOption(req: FastifyRequest): string[] | undefined {
  const v = (req.query as Record<string, unknown> | undefined)?.tools;
  if (typeof v !== 'string' || v === '') return undefined;
  return v
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean)
    .slice(0, 64);
}

export const DEFAULT_MCP_IDLE_MS = MCP_SESSION_DEFAULTS.idleMs;
export const DEFAULT_MCP_SESSIONS_PER_CALLER = MCP_SESSION_DEFAULTS.maxSessionsPerCaller;

/**
 * MCP over Streamable HTTP at `/mcp`. Every request is authenticated; a session belongs to
 * the principal that initialised it. Host and Origin must name this machine (or an allowed
 * host): a web page cannot drive a local warren by DNS rebinding.
 */
export function registerMcpHttp(
  app: FastifyInstance,
  warren: Warren,
  catalog: ToolCatalog,
  log: ErrorLog,
  opts: McpHttpOptions = {},
): void {
  const idleMs = opts.idleMs ?? DEFAULT_MCP_IDLE_MS;
  const cap = opts.maxSessionsPerCaller ?? DEFAULT_MCP_SESSIONS_PER_CALLER;
  const sessions = new McpSessions(idleMs);
  const allowed = new Set([...LOOPBACK, ...(opts.allowedHosts ?? [])]);
  const unwatch = warren.metrics?.watchMcpSessions(() => sessions.size);
  app.addHook('preClose', async () => {
    unwatch?.();
    await sessions.closeAll();
  });

  // Host headers already found allowed, as sent: a client sends the same one every call, and
  // parsing it is a URL parse. Bounded, and only allowed values enter.
  const allowedHeaders = new Set<string>();
  const guard = (req: FastifyRequest, reply: FastifyReply): boolean => {
    const header = req.headers.host ?? '';
    if (!allowedHeaders.has(header)) {
      const host = hostnameOf(header, false);
      if (!host || !allowed.has(host)) {
        rpcError(reply, 403, -32000, `Host ${JSON.stringify(header)} is not allowed`);
        return false;
      }
      if (allowedHeaders.size < MAX_REMEMBERED_HOSTS) allowedHeaders.add(header);
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const o = hostnameOf(origin, true);
      if (!o || !allowed.has(o)) {
        rpcError(reply, 403, -32000, `Origin ${JSON.stringify(origin)} is not allowed`);
        return false;
      }
    }
    return true;
  };

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!guard(req, reply)) return;
    const principal = principalOf(req);
    const owner = `${principal.zone}/${principalId(principal)}`;
    const sid = req.headers['mcp-session-id'];
    const session = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (typeof sid === 'string' && !session) return rpcError(reply, 404, -32001, 'Session not found');
    if (session && session.owner !== owner)
      return rpcError(reply, 403, -32000, 'This MCP session belongs to another caller');
    if (!session) {
      if (req.method !== 'POST' || !isInitialize(req.body)) {
        return rpcError(reply, 400, -32000, 'Bad Request: no valid session id; start with initialize');
      }
      // An operator's list may start with more groups on: `/mcp?tools=schedules,groups` or `all`.
      const toolGroups = toolsOption(req);
      if (toolGroups) {
        try {
          if (principal.kind !== 'operator') throw new Error("a session's tools were fixed at spawn");
          parseGroups(warren.gate, toolGroups);
        } catch (error) {
          return rpcError(reply, 400, -32602, `tools: ${(error as Error).message}`);
        }
      }
      const held = sessions.held(owner);
      if (held >= cap) {
        return rpcError(
          reply,
          429,
          -32000,
          `too many open MCP sessions for this caller (cap ${cap}): close one (DELETE /mcp) or let one idle out (${Math.round(idleMs / 1000)} s without a request or an open stream)`,
          { code: 'limit_exceeded', cap, held },
        );
      }
      // Counted before the first await, so concurrent initializes cannot all pass the check.
      const release = sessions.reserve(owner);
      let transport: StreamableHTTPServerTransport | undefined;
      try {
        // The MCP SDK loads with the first session, not with the server: serving starts sooner.
        const [{ StreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([
          import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
          import('../mcp/server.ts'),
        ]);
        const opened: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            release();
            sessions.add(id, { transport: opened, owner }, reply.raw);
          },
        });
        transport = opened;
        opened.onclose = () => {
          if (opened.sessionId) sessions.remove(opened.sessionId);
        };
        await createMcpServer(warren, catalog, principal, {
          log,
          ...(toolGroups ? { toolGroups } : {}),
        }).connect(opened);
        reply.hijack();
        await transport.handleRequest(req.raw, reply.raw, req.body);
      } finally {
        release();
        // An initialize that did not make a session, or made one after the close began (the
        // table did not keep it), leaves nothing behind.
        if (transport && (!transport.sessionId || sessions.get(transport.sessionId)?.transport !== transport))
          void transport.close().catch(() => {});
      }
      return;
    }
    sessions.touch(sid as string, reply.raw);
    reply.hijack();
    await session.transport.handleRequest(req.raw, reply.raw, req.body);
  };

  app.post('/mcp', handle);
  app.get('/mcp', handle);
  app.delete('/mcp', handle);
}
