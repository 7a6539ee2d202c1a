/**
 * A loopback HTTP proxy that adds `Authorization: Bearer <key>` to every request and
 * streams the answer back (SSE included): for clients that cannot send headers, such as
 * the MCP conformance runner. Stopped by the test that starts it.
 */
import { createServer, request, type Server } from 'node:http';

export async function authProxy(
  target: string,
  bearer: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    if (process.env.PROXY_DEBUG) console.error('proxy', req.method, req.url, JSON.stringify(req.headers));
    const upstream = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host, authorization: `Bearer ${bearer}` },
      },
      (up) => {
        if (process.env.PROXY_DEBUG) console.error('  <-', up.statusCode, up.headers['content-type']);
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
