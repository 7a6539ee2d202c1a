import { chmodSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';

/**
 * The way to warren for an agent without network (`network: 'none'`). On the host, a unix
 * socket in the agent's private directory, bound into its sandbox, forwards each connection
 * to warren's HTTP port. Inside, FORWARDER listens on 127.0.0.1:<port> of the sandbox's own
 * loopback and forwards to that socket, then runs the agent: `WARREN_URL` and
 * `WARREN_MCP_URL` (http://127.0.0.1:<port>) work unchanged, and nothing else is reachable.
 */
export function openBridge(path: string, target: { host: string; port: number }): Server {
  const server = createServer((inbound) => {
    const outbound = connect(target.port, target.host);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.pipe(outbound).pipe(inbound);
  });
  server.on('error', () => {}); // an agent gone mid-connection is not the server's problem
  // Bound synchronously (a pipe's bind happens inside listen), so it exists before bwrap binds it.
  server.listen(path);
  chmodSync(path, 0o600);
  server.unref();
  return server;
}

/**
 * Run by node inside the sandbox: `node -e FORWARDER <port> <socket> <cmd> <args…>`. Listens,
 * then starts the agent with the same stdio and ends as it ends (signals passed on).
 */
export const FORWARDER = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const [port, sock, cmd, ...args] = process.argv.slice(1);
const server = net.createServer((c) => {
  const s = net.connect(sock);
  c.on('error', () => s.destroy());
  s.on('error', () => c.destroy());
  c.pipe(s).pipe(c);
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(cmd, args, { stdio: 'inherit' });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('error', (e) => { process.stderr.write(String(e.message) + '\\n'); process.exit(127); });
  child.on('exit', (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code ?? 1);
  });
});
`;
