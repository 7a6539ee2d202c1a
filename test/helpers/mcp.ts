/** The official MCP SDK client, connected to a warren over Streamable HTTP. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isolatingFetch } from '../../src/surfaces/mcp/client-fetch.ts';

export async function mcpClient(
  url: string,
  bearer: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'warren-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${bearer}`, ...headers } },
    fetch: isolatingFetch(),
  });
  await client.connect(transport);
  return client;
}

/** A tool result's structured content (warren always sends it). */
export const structured = <T = Record<string, unknown>>(r: unknown): T =>
  (r as { structuredContent: T }).structuredContent;

import { connect as netConnect, type Socket } from 'node:net';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** An MCP client transport over a unix socket: newline-delimited JSON-RPC, as on stdio. */
export class SocketClientTransport implements Transport {
  private socket: Socket | undefined;
  private buffer = new ReadBuffer();
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(private readonly path: string) {}

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = netConnect(this.path, () => resolve());
      this.socket = socket;
      socket.once('error', reject);
      socket.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
      });
      socket.on('close', () => this.onclose?.());
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.socket?.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.socket?.end();
  }
}

/** SDK clients a suite opens as it goes, closed together (`closeAll` in a `finally`). */
export function mcpClients(): {
  connect(h: { url: string }, bearer: string): Promise<Client>;
  closeAll(): Promise<unknown>;
} {
  const clients: Client[] = [];
  return {
    async connect(h, bearer) {
      const c = await mcpClient(h.url, bearer);
      clients.push(c);
      return c;
    },
    closeAll: () => Promise.allSettled(clients.splice(0).map((c) => c.close())),
  };
}
