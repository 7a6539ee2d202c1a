import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEADLINE_HEADER, EXPIRED, expired, TUNNEL_DEADLINE_MS } from '../wire.ts';

/** Largest request body an agent may send through the tunnel. */
const MAX_BODY = 4 * 1024 * 1024;

export interface TunnelWire {
  /** Whether the connection to the server is up. */
  up(): boolean;
  /** A new tunnel request id and its frame sent; answers arrive through `answer`. */
  open(req: {
    method: string;
    path: string;
    headers: Record<string, string>;
    body: string | null;
    deadline: number;
  }): number;
  abort(id: number): void;
}

/**
 * The runner's local endpoint: agents here get `WARREN_URL=http://127.0.0.1:<port>` and talk
 * MCP and REST to it as if it were the server; each request travels the runner's WebSocket.
 * Loopback only: nothing on the runner's host is reachable from outside, and the agent's
 * own token still authenticates every request at the server.
 */
export class TunnelProxy {
  private server: Server | undefined;
  private readonly open = new Map<number, ServerResponse>();
  port = 0;

  constructor(private readonly wire: TunnelWire) {}

  async listen(): Promise<void> {
    const server = createServer((req, res) => void this.onRequest(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const readAt = Date.now();
    if (!this.wire.up())
      return void res.writeHead(503, { 'content-type': 'text/plain' }).end('runner offline\n');
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) return void res.writeHead(413).end();
      chunks.push(c as Buffer);
    }
    // Read late (this runner was paused): an agent that gave up and closed is not served; one
    // whose deadline passed is answered as expired, and neither reaches the server.
    if (res.destroyed || req.socket.destroyed) return;
    // Every request has a deadline: the agent's own, else TUNNEL_DEADLINE_MS from its arrival.
    const given = Number(req.headers[DEADLINE_HEADER]);
    const timed = { deadline: Number.isFinite(given) && given > 0 ? given : readAt + TUNNEL_DEADLINE_MS };
    if (expired(timed)) {
      return void res
        .writeHead(504, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: EXPIRED }));
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    const id = this.wire.open({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks).toString('utf8') : null,
      ...timed,
    });
    this.open.set(id, res);
    res.on('close', () => {
      if (this.open.delete(id)) this.wire.abort(id);
    });
  }

  head(id: number, status: number, headers: Record<string, string>): void {
    const res = this.open.get(id);
    if (res && !res.headersSent) res.writeHead(status, headers);
  }

  data(id: number, chunk: string): void {
    this.open.get(id)?.write(Buffer.from(chunk, 'base64'));
  }

  end(id: number, error?: string): void {
    const res = this.open.get(id);
    this.open.delete(id);
    if (!res) return;
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(error && !res.writableEnded ? '' : undefined);
  }

  /** The wire dropped: every request in flight fails now, not at its client's timeout. */
  failAll(): void {
    for (const id of [...this.open.keys()]) this.end(id, 'runner disconnected');
  }

  async close(): Promise<void> {
    this.failAll();
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
}
