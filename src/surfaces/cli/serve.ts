import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { ensureOperatorKey } from '../../auth/keys.ts';
import { runDemo } from '../../demo/demo.ts';
import type { Durability } from '../../store/dialect.ts';
import { Warren } from '../../warren.ts';
import { buildHttpServer } from '../http/server.ts';
import { ToolCatalog } from '../mcp/server.ts';
import { ZoneSockets } from '../mcp/socket.ts';
import type { CliIO, LocalCommand } from './types.ts';

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  db?: string;
  durability: Durability;
  demo: boolean;
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
  if (opts.demo) {
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
  return { warren, http, sockets, url, stop };
}

export const serveCommand: LocalCommand = {
  command: ['serve'],
  summary: 'Run the warren server (REST, live events) on one port',
  usage: [
    'warren serve [--host 127.0.0.1] [--port 7700] [--data-dir ./.warren] [--db <sqlite file | postgres:// url>]',
    '             [--durability process|power] [--demo]',
    '',
    '  --db          a SQLite file (default <data-dir>/warren.db) or postgres://…[?schema=name]',
    '  --durability  process: survives a kernel crash (default); power: survives power loss',
    '  --demo        run the bundled demo once the server is up',
    '',
    'Environment: WARREN_HOST, WARREN_PORT, WARREN_DATA_DIR, WARREN_DB, WARREN_DURABILITY.',
    'Examples:',
    '  warren serve',
    '  warren serve --port 7800 --db postgres://postgres@127.0.0.1:5432/warren',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const env = io.env;
    const { values } = parseArgs({
      args,
      strict: true,
      options: {
        host: { type: 'string', default: env.WARREN_HOST ?? '127.0.0.1' },
        port: { type: 'string', default: env.WARREN_PORT ?? '7700' },
        'data-dir': { type: 'string', default: env.WARREN_DATA_DIR ?? '.warren' },
        db: { type: 'string', ...(env.WARREN_DB ? { default: env.WARREN_DB } : {}) },
        durability: { type: 'string', default: env.WARREN_DURABILITY ?? 'process' },
        demo: { type: 'boolean', default: false },
      },
    });
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      io.stderr.write(`error: --port must be 0-65535, got ${values.port}\n`);
      return 2;
    }
    if (values.durability !== 'process' && values.durability !== 'power') {
      io.stderr.write('error: --durability must be process or power\n');
      return 2;
    }
    let running: Running;
    try {
      running = await serve(
        {
          host: values.host!,
          port,
          dataDir: values['data-dir']!,
          ...(values.db ? { db: values.db } : {}),
          durability: values.durability,
          demo: values.demo!,
        },
        io.stdout,
      );
    } catch (error) {
      io.stderr.write(`warren: cannot start: ${(error as Error).message}\n`);
      return 1;
    }
    await new Promise<void>((resolve) => {
      const onSignal = () => {
        io.stderr.write('\nwarren: shutting down…\n');
        void running.stop().then(resolve, (error) => {
          io.stderr.write(`warren: shutdown failed: ${(error as Error).message}\n`);
          resolve();
        });
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
    });
    return 0;
  },
};

export const demoCommand: LocalCommand = {
  command: ['demo'],
  summary: 'Run the server with the bundled demo (what `npm start` does)',
  usage: 'warren demo [serve options]\n\nSame options as `warren serve`; adds --demo.',
  run: (args, io) => serveCommand.run(['--demo', ...args], io),
};
