import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { GatingPolicy } from './auth/gating.ts';
import { ensureOperatorKey } from './auth/keys.ts';
import { deriveNodeId } from './config/node-id.ts';
import type { KernelConfig } from './kernel/config.ts';
import type { PluginSelection } from './plugins/host.ts';
import type { Durability } from './store/dialect.ts';
import { buildHttpServer } from './surfaces/http/server.ts';
import { ToolCatalog } from './surfaces/mcp/catalog.ts';
import { ZoneSockets } from './surfaces/mcp/socket.ts';
import { Warren } from './warren.ts';

/**
 * The composition root: one running warren is a store and kernel (`Warren`), the operator
 * key, REST + MCP on one HTTP port, and an MCP unix socket per zone. The CLI's `serve`
 * imports this lazily; tests and benches call `serve()` directly.
 */

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  db?: string;
  durability: Durability;
  demo: boolean;
  /** Kernel settings (limits, timers, retention); `nodeId` is derived from the data dir and db when unset. */
  kernel?: Partial<KernelConfig>;
  /** The depth tiers' tool sets. */
  gating?: GatingPolicy;
  /** Which plugins a fresh database enables, and each plugin's settings. */
  plugins?: Partial<PluginSelection>;
}

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
  const warren = await Warren.open({
    dataDir: opts.dataDir,
    durability: opts.durability,
    deferResume: true,
    ...(opts.db ? { db: opts.db } : {}),
    // Warren.open's own default knows only the database; a server also knows its data dir
    // and, on PostgreSQL, its host (src/config/node-id.ts), so nodes sharing a database differ.
    kernel: { ...opts.kernel, nodeId: opts.kernel?.nodeId ?? deriveNodeId(opts.dataDir, opts.db ?? null) },
    ...(opts.gating ? { gating: opts.gating } : {}),
    ...(opts.plugins ? { plugins: opts.plugins } : {}),
  });
  const key = await ensureOperatorKey(warren.store, warren.kernel.ids, opts.dataDir);
  const http = await buildHttpServer(warren);
  let address: string;
  try {
    address = await http.listen({ host: opts.host, port: opts.port });
  } catch (error) {
    await warren.close();
    throw error;
  }
  const url = address.replace('[::1]', 'localhost');
  warren.kernel.config.publicUrl = url;
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
  if (key.created) {
    out.write(`operator API key (shown once; also saved to ${key.file}, mode 0600):\n  ${key.key}\n`);
  }
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await http.close();
      await sockets.close();
      await warren.close();
    })();
    return stopping;
  };
  if (opts.demo) await startDemo(warren, out);
  return { warren, http, sockets, url, stop };
}

/** The demo is loaded only when asked for. */
async function startDemo(warren: Warren, out: Out): Promise<void> {
  const { runDemo } = await import('./demo/demo.ts');
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
