import { parseArgs } from 'node:util';
import { readOperatorKey } from '../../vocab/key-file.ts';
import type { CliIO, LocalCommand } from './types.ts';

/**
 * `warren mcp-serve coordinator` (alias `hermes`): the coordinator bridge as a stdio MCP
 * server with seed 004's tool names, each a thin call of a warren syscall over REST. The
 * adapter narrows, never widens: its own mutation classes and roots (the seed's variables)
 * are checked here, and the server checks its own again.
 */
export const mcpServeCommand: LocalCommand = {
  command: ['mcp-serve'],
  summary: 'The coordinator bridge as an MCP server on stdio (seed tool names)',
  usage: [
    'warren mcp-serve coordinator [--url http://127.0.0.1:7700] [--key <operator key>] [--check --json]',
    '',
    '`hermes` is accepted for `coordinator`. --check prints ok, the server name and the tools, and starts no transport.',
    'Environment (SKC_COORDINATOR_MCP_* or WARREN_COORDINATOR_*): WORKDIR_ROOTS (path-delimited), MUTATIONS',
    '(sessions,questions,reports), PROFILE, REPO, SESSION_COMMAND, ARTIFACT_BYTE_CAP.',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const { values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        key: { type: 'string' },
        zone: { type: 'string' },
        'data-dir': { type: 'string' },
        check: { type: 'boolean' },
        json: { type: 'boolean' },
      },
    });
    const which = positionals[0];
    if (which !== 'coordinator' && which !== 'hermes') {
      io.stderr.write('warren mcp-serve: the one server is `coordinator` (alias `hermes`)\n');
      return 2;
    }
    const { adapterEnv } = await import('../../plugins/turns/preset.ts');
    const { checkReport, serveCoordinator } = await import('./coordinator-server.ts');
    let settings: ReturnType<typeof adapterEnv>;
    try {
      settings = adapterEnv(io.env);
    } catch (error) {
      io.stderr.write(`warren mcp-serve: ${(error as Error).message}\n`);
      return 2;
    }
    if (values.check) {
      const report = checkReport(settings);
      io.stdout.write(
        values.json ? `${JSON.stringify(report)}\n` : `ok: ${report.server} (${report.tools.length} tools)\n`,
      );
      return 0;
    }
    const env = io.env;
    const url = values.url ?? env.WARREN_URL ?? 'http://127.0.0.1:7700';
    let key = values.key ?? env.WARREN_API_KEY;
    if (!key) {
      const saved = readOperatorKey(values['data-dir'], env);
      if ('missing' in saved) {
        io.stderr.write(
          `warren mcp-serve: no operator key: pass --key, set WARREN_API_KEY, or create ${saved.missing}\n`,
        );
        return 1;
      }
      key = saved.key;
    }
    const zone = values.zone ?? env.WARREN_ZONE;
    const headers: Record<string, string> = {
      authorization: `Bearer ${key}`,
      ...(zone ? { 'x-warren-zone': zone } : {}),
    };
    return serveCoordinator(new URL(url), headers, settings, io.stderr);
  },
};
