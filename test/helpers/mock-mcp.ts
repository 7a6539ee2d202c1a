/**
 * A stand-in for warren's MCP endpoint: a real Streamable HTTP MCP server on loopback with one
 * tool (`ping`), recording the bearer token of every request. Claude Code connects to it
 * before its first turn, so runtime tests can run without a kernel behind it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface MockMcp {
  /** `http://127.0.0.1:<port>`; the endpoint is any path under it. */
  base: string;
  /** The Authorization header of every request, in order. */
  tokens: string[];
  close(): Promise<void>;
}

/** Start one; `delayMs` holds every answer back (an MCP server too slow to connect). */
export async function startMockMcp(delayMs = 0): Promise<MockMcp> {
  const tokens: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    tokens.push(String(req.headers.authorization ?? ''));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs).unref());
    if (res.destroyed) return;
    const mcp = new McpServer({ name: 'warren-stand-in', version: '0.0.0' });
    mcp.registerTool('ping', { description: 'answers pong' }, async () => ({
      content: [{ type: 'text', text: 'pong' }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcp.connect(transport);
    const raw = Buffer.concat(chunks).toString('utf8');
    await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
  };
  const server: Server = createServer((req, res) => {
    // A client that went away mid-request is not this test's failure.
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
