import { randomUUID } from 'node:crypto';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Warren } from '../../syscalls/warren.ts';
import { principalId } from '../../vocab/principal.ts';
import type { ErrorLog } from '../../vocab/public-error.ts';
import type { ToolCatalog } from '../mcp/catalog.ts';
import { principalOf } from './auth.ts';

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
  /** Sessions idle this long are closed (default 10 minutes). */
  idleMs?: number;
  /** Open MCP sessions one credential may hold at once (default 32). */
  maxSessionsPerCaller?: number;
  /** How often long calls report progress. */
  progressEveryMs?: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  owner: string;
  lastSeen: number;
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

export const DEFAULT_MCP_IDLE_MS = 10 * 60_000;
export const DEFAULT_MCP_SESSIONS_PER_CALLER = 32;

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
  const sessions = new Map<string, Session>();
  // Initializations under way per owner: they count against the cap before they have an id.
  const opening = new Map<string, number>();
  const allowed = new Set([...LOOPBACK, ...(opts.allowedHosts ?? [])]);
  const idleMs = opts.idleMs ?? DEFAULT_MCP_IDLE_MS;
  const cap = opts.maxSessionsPerCaller ?? DEFAULT_MCP_SESSIONS_PER_CALLER;

  const expire = () => {
    const cutoff = Date.now() - idleMs;
    for (const [id, s] of sessions) {
      if (s.lastSeen >= cutoff) continue;
      sessions.delete(id);
      void s.transport.close().catch(() => {});
    }
  };
  const held = (owner: string) => {
    let n = opening.get(owner) ?? 0;
    for (const s of sessions.values()) if (s.owner === owner) n++;
    return n;
  };
  const sweep = setInterval(expire, Math.max(1000, Math.min(60_000, idleMs / 2)));
  sweep.unref();
  app.addHook('preClose', async () => {
    clearInterval(sweep);
    await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
    sessions.clear();
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
      expire();
      if (held(owner) >= cap) {
        return rpcError(
          reply,
          429,
          -32000,
          `too many open MCP sessions for this caller (cap ${cap}): close one (DELETE /mcp) or let one idle out (${Math.round(idleMs / 1000)} s)`,
          { code: 'limit_exceeded', cap },
        );
      }
      // Counted before the first await, so concurrent initializes cannot all pass the check.
      opening.set(owner, (opening.get(owner) ?? 0) + 1);
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
            sessions.set(id, { transport: opened, owner, lastSeen: Date.now() });
          },
        });
        transport = opened;
        opened.onclose = () => {
          if (opened.sessionId) sessions.delete(opened.sessionId);
        };
        await createMcpServer(warren, catalog, principal, { log }).connect(opened);
        reply.hijack();
        await transport.handleRequest(req.raw, reply.raw, req.body);
      } finally {
        const n = (opening.get(owner) ?? 1) - 1;
        if (n > 0) opening.set(owner, n);
        else opening.delete(owner);
        // An initialize that did not make a session leaves nothing behind.
        if (transport && (!transport.sessionId || !sessions.has(transport.sessionId)))
          void transport.close().catch(() => {});
      }
      return;
    }
    session.lastSeen = Date.now();
    reply.hijack();
    await session.transport.handleRequest(req.raw, reply.raw, req.body);
  };

  app.post('/mcp', handle);
  app.get('/mcp', handle);
  app.delete('/mcp', handle);
}
