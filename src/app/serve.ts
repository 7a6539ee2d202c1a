import { configFlagsHelp, parseConfigArgs } from '../surfaces/cli/config-args.ts';
import { loadOrReport } from '../surfaces/cli/config-load.ts';
import { CliError } from '../surfaces/cli/errors.ts';
import type { CliIO, LocalCommand } from '../surfaces/cli/types.ts';
import type { Running } from './server.ts';

/** `warren serve` and `warren demo`: read the configuration, then start the server (src/server.ts). */

export const serveCommand: LocalCommand = {
  command: ['serve'],
  summary: 'Run the warren server (REST, MCP, live events) on one port',
  usage: [
    'warren serve [--host 127.0.0.1] [--port 7700] [--data-dir ./.warren] [--db <sqlite file | postgres:// url>] [--demo] [settings]',
    '',
    'Every setting comes from, highest first: a flag, a WARREN_* environment variable, the config',
    'file (<data dir>/warren.config.json, .yaml or .yml), the default. `warren config show` prints',
    'what is in force and where each value came from; docs/configuration.md lists every key.',
    '',
    'Settings (flag, environment variable, meaning):',
    ...configFlagsHelp(),
    '',
    '  --demo  run the bundled demo once the server is up',
    '',
    'A bad setting is refused before anything starts (exit 2), naming the file and key, the',
    'variable or the flag, and what was expected.',
    '',
    'Examples:',
    '  warren serve',
    '  warren serve --port 7800 --db postgres://postgres@127.0.0.1:5432/warren',
    '  WARREN_MAX_DEPTH=4 warren serve --tier-agent ipc_spawn,ipc_write,ipc_read,ipc_close',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const parsed = parseConfigArgs(args, io, ['demo'], ['serve']);
    // The server (store, kernel, Fastify, runtimes) loads only for this command, as one
    // bundle in the build (scripts/bundle-server.mjs), which also holds the config loader.
    let server: typeof import('./server.ts');
    try {
      server = await import('./server.ts');
    } catch (error) {
      throw new CliError(`cannot start: ${(error as Error).message}`);
    }
    const loaded = await loadOrReport(parsed, io, server);
    if (loaded.resolved.file) io.stdout.write(`config: ${loaded.resolved.file}\n`);
    // Signals are caught from the start: one that arrives while the server is still coming up
    // is a graceful stop as soon as it is up, never a hard exit with agents half started.
    let stop: (() => void) | undefined;
    let asked = false;
    const onSignal = () => {
      if (stop) stop();
      else asked = true;
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let running: Running;
    try {
      running = await server.serve({ ...loaded.options, demo: parsed.switches.demo === true }, io.stdout);
    } catch (error) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      throw new CliError(`cannot start: ${(error as Error).message}`);
    }
    await new Promise<void>((resolve) => {
      stop = () => {
        io.stderr.write('\nwarren: shutting down…\n');
        void running.stop().then(resolve, (error) => {
          io.stderr.write(`warren: shutdown failed: ${(error as Error).message}\n`);
          resolve();
        });
      };
      if (asked) stop();
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
