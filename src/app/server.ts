import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { deriveNodeId } from '../cluster/node-id.ts';
import type { ServeOptions } from '../config/options.ts';
import { ensureOperatorKey } from '../kernel/operator-keys.ts';
import { type DataDirLock, lockDataDir } from '../store/data-dir-lock.ts';
import { buildHttpServer } from '../surfaces/http/server.ts';
import { ToolCatalog } from '../surfaces/mcp/catalog.ts';
import { ZoneSockets } from '../surfaces/mcp/socket.ts';
import { Warren } from '../syscalls/warren.ts';
import { slowStep } from '../util/slow-step.ts';

/**
 * The configuration loader, from the same bundle: `warren serve` reads its settings with it, so
 * the loader's zod schemas and syscall table are the server's own copy, not a second one
 * loaded module by module from dist/ before the bundle.
 */
export { ConfigError } from '../config/errors.ts';
export { loadConfig } from '../config/load.ts';
export type { ServeOptions };

/**
 * The server's own Warren class. In the build, dist/app/server.js loads a bundle with its own copy of
 * every module, so code that wraps `Warren.open` for a served warren (test/crash/serve-with.js)
 * must take it from here, not from dist/warren.js.
 */
export { Warren };

/**
 * The composition root: one running warren is a store and kernel (`Warren`), the operator
 * key, REST + MCP on one HTTP port, and an MCP unix socket per zone. The CLI's `serve`
 * imports this lazily; tests and benches call `serve()` directly.
 */

export interface Running {
  warren: Warren;
  http: FastifyInstance;
  sockets: ZoneSockets;
  url: string;
  stop(): Promise<void>;
}

type Out = { write(s: string): unknown };

/** Start a warren server: store, kernel, HTTP on one port. */
export async function serve(opts: ServeOptions, out: Out): Promise<Running> {
  // One logger for the whole server, injected everywhere (no global one): JSON lines on
  // stderr, written synchronously so the last lines before a crash are not lost.
  const log = serverLog(opts);
  if (opts.metrics?.enabled !== false && opts.metrics?.public && !LOOPBACK.has(opts.host)) {
    log.warn({ host: opts.host }, 'metrics.public is ignored: the server is not bound to a loopback address');
  }
  // One server per data dir, taken before anything else is touched: a second server must not
  // sweep the first's agents or resume its sessions (src/store/data-dir-lock.ts).
  const lock = lockDataDir(opts.dataDir);
  try {
    return await serveLocked(opts, out, log, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function serveLocked(
  opts: ServeOptions,
  out: Out,
  log: ReturnType<typeof serverLog>,
  lock: DataDirLock,
): Promise<Running> {
  const metricsOn = opts.metrics?.enabled !== false;
  const loopback = LOOPBACK.has(opts.host);
  const warren = await Warren.open({
    log,
    metrics: metricsOn,
    ...(opts.tracing ? { tracing: opts.tracing } : {}),
    dataDir: opts.dataDir,
    durability: opts.durability,
    ...(opts.maxSearchMs !== undefined ? { maxSearchMs: opts.maxSearchMs } : {}),
    ...(opts.callsPerTurn !== undefined ? { callsPerTurn: opts.callsPerTurn } : {}),
    ...(opts.callSliceMs !== undefined ? { callSliceMs: opts.callSliceMs } : {}),
    ...(opts.dbPoolMax !== undefined ? { dbPoolMax: opts.dbPoolMax } : {}),
    deferResume: true,
    ...(opts.db ? { db: opts.db } : {}),
    // Warren.open's own default knows only the database; a server also knows its data dir
    // and, on PostgreSQL, its host (src/config/node-id.ts), so nodes sharing a database differ.
    kernel: { ...opts.kernel, nodeId: opts.kernel?.nodeId ?? deriveNodeId(opts.dataDir, opts.db ?? null) },
    ...(opts.gating ? { gating: opts.gating } : {}),
    ...(opts.cluster ? { cluster: opts.cluster } : {}),
    ...(opts.plugins ? { plugins: opts.plugins } : {}),
    ...(opts.jwt ? { jwt: opts.jwt } : {}),
  });
  const key = await ensureOperatorKey(warren.store, warren.kernel.ids, opts.dataDir);
  const http = await buildHttpServer(warren, {
    logger: log,
    metricsPublic: metricsOn && opts.metrics?.public === true && loopback,
    ...(opts.mcp ? { mcp: opts.mcp } : {}),
  });
  let address: string;
  try {
    address = await http.listen({ host: opts.host, port: opts.port });
  } catch (error) {
    await warren.close();
    throw error;
  }
  const url = address.replace('[::1]', 'localhost');
  lock.announce(url);
  warren.kernel.config.publicUrl = url;
  warren.kernel.config.gatewayUrl = url;
  const sockets = new ZoneSockets(warren, new ToolCatalog(warren), join(opts.dataDir, 'mcp'));
  try {
    await sockets.start();
  } catch (error) {
    await http.close();
    await warren.close();
    throw error;
  }
  // Agents that were live before a restart come back now that their endpoint answers.
  warren.kernel.resumeLost();
  out.write(`warren listening on ${url} (store: ${opts.db ?? `${opts.dataDir}/warren.db`})\n`);
  out.write(
    `MCP: ${url}/mcp (Streamable HTTP); unix socket ${sockets.paths().join(', ')}; stdio: warren mcp\n`,
  );
  log.info(
    { url, store: warren.store.kind, tracing: opts.tracing ? opts.tracing.url : null },
    'warren listening',
  );
  out.write(`${containmentNotice(warren)}\n`);
  if (key.created) {
    out.write(`operator API key (shown once; also saved to ${key.file}, mode 0600):\n  ${key.key}\n`);
  }
  const login = await http.uiLoginUrl(url);
  if (login) out.write(`web UI: ${url}/  (one-time login link: ${login})\n`);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Requests still running when the grace runs out (a long wait, a slow client) are cut off.
      const graceMs = warren.kernel.config.shutdownGraceMs;
      const cut = setTimeout(() => {
        log.warn({ graceMs }, 'shutdown grace ran out: closing the connections still open');
        http.server.closeAllConnections();
      }, graceMs);
      try {
        await slowStep(log, 'shutdown: closing HTTP', () => http.close());
      } finally {
        clearTimeout(cut);
      }
      try {
        await slowStep(log, 'shutdown: closing sockets', () => sockets.close());
        await warren.close();
      } finally {
        lock.release();
      }
    })();
    return stopping;
  };
  if (opts.demo) await startDemo(warren, out);
  return { warren, http, sockets, url, stop };
}

/** Said at start: how agents are confined, and what is refused when they cannot be. */
function containmentNotice(warren: Warren): string {
  const c = warren.kernel.containment;
  if (c.inForce === 'bwrap')
    return `containment: agents run confined (bubblewrap, network ${warren.kernel.config.containmentNetwork})`;
  if (c.inForce === 'none')
    return "containment: none: agents run unconfined, as this server's user (containment: none)";
  return `containment: UNAVAILABLE (${c.reason}): agents that can run shell commands (command, acp, codex, claude-code with Bash) will be refused; install bubblewrap, or set containment: none to run them unconfined`;
}

const serverLog = (opts: ServeOptions) =>
  pino(
    { level: opts.logLevel ?? 'info', base: { pid: process.pid } },
    pino.destination({ fd: 2, sync: true }),
  );

/** Addresses only this machine can reach. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** The demo is loaded only when asked for. */
async function startDemo(warren: Warren, out: Out): Promise<void> {
  const { runDemo } = await import('./demo.ts');
  const { lead } = await runDemo(warren, (l) => out.write(`${l}\n`));
  out.write(
    [
      '',
      'The demo is running. In another terminal:',
      '  ./bin/warren.js ps',
      '  ./bin/warren.js streams list',
      '  ./bin/warren.js events',
      `  ./bin/warren.js session events ${lead}`,
      'Ctrl-C stops the server (sessions stay resumable).',
      '',
    ].join('\n'),
  );
}
