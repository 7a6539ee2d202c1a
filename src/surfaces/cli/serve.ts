import { parseArgs } from 'node:util';
import type { Running } from '../../server.ts';
import type { CliIO, LocalCommand } from './types.ts';

/** `warren serve` and `warren demo`: parse the flags, then start the server (src/server.ts). */

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
      // The server (store, kernel, Fastify, runtimes, the MCP SDK) loads only for this command.
      const { serve } = await import('../../server.ts');
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
