import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../kernel/principal.ts';
import { principalId } from '../../kernel/principal.ts';
import type { Warren } from '../../warren.ts';
import { createMcpServer, type ToolCatalog } from './server.ts';

export interface McpHttpOptions {
  /** Host names accepted in Host and Origin besides loopback (for a server bound elsewhere). */
  allowedHosts?: readonly string[];
  /** Sessions idle this long are closed. */
  idleMs?: number;
  /** How often long calls report progress. */
  progressEveryMs?: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  owner: string;
  lastSeen: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The hostname of a Host header or Origin URL, or null if it cannot be read. */
function hostnameOf(value: string, isOrigin: boolean): string | null {
  try {
    return new URL(isOrigin ? value : `http://${value}`).hostname;
  } catch {
    return null;
  }
}

const rpcError = (reply: FastifyReply, status: number, code: number, message: string) =>
  reply.status(status).send({ jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * MCP over Streamable HTTP at `/mcp`. Every request is authenticated; a session belongs to
 * the principal that initialised it. Host and Origin must name this machine (or an allowed
 * host): a web page cannot drive a local warren by DNS rebinding.
 */
export function registerMcpHttp(
  app: FastifyInstance,
  warren: Warren,
  catalog: ToolCatalog,
  principalOf: (req: FastifyRequest) => Promise<Principal>,
  opts: McpHttpOptions = {},
): void {
  const sessions = new Map<string, Session>();
  const allowed = new Set([...LOOPBACK, ...(opts.allowedHosts ?? [])]);
  const idleMs = opts.idleMs ?? 60 * 60_000;

  const sweep = setInterval(() => {
    const cutoff = Date.now() - idleMs;
    for (const [id, s] of sessions)
      if (s.lastSeen < cutoff) void s.transport.close().finally(() => sessions.delete(id));
  }, 60_000);
  sweep.unref();
  app.addHook('preClose', async () => {
    clearInterval(sweep);
    await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
    sessions.clear();
  });

  const guard = (req: FastifyRequest, reply: FastifyReply): boolean => {
    const host = hostnameOf(req.headers.host ?? '', false);
    if (!host || !allowed.has(host)) {
      rpcError(reply, 403, -32000, `Host ${JSON.stringify(req.headers.host ?? '')} is not allowed`);
      return false;
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
    const principal = await principalOf(req);
    const owner = `${principal.zone}/${principalId(principal)}`;
    const sid = req.headers['mcp-session-id'];
    let session = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (typeof sid === 'string' && !session) return rpcError(reply, 404, -32001, 'Session not found');
    if (session && session.owner !== owner)
      return rpcError(reply, 403, -32000, 'This MCP session belongs to another caller');
    if (!session) {
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        return rpcError(reply, 400, -32000, 'Bad Request: no valid session id; start with initialize');
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, owner, lastSeen: Date.now() });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await createMcpServer(warren, catalog, principal).connect(transport);
      session = { transport, owner, lastSeen: Date.now() };
    }
    session.lastSeen = Date.now();
    reply.hijack();
    await session.transport.handleRequest(req.raw, reply.raw, req.body);
  };

  app.post('/mcp', handle);
  app.get('/mcp', handle);
  app.delete('/mcp', handle);
}
