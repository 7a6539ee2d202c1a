import { GLOBAL_NAMES } from './globals.ts';
import { preamble } from './preamble.ts';
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
    '(sessions,questions,reports), PROFILE, REPO, SESSION_COMMAND (a program, or `skc --worktree [name]`), WORKTREE, ARTIFACT_BYTE_CAP.',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const cmd = preamble(args, io, {
      words: ['mcp-serve'],
      globals: GLOBAL_NAMES,
      options: { check: { type: 'boolean' } },
      positionals: true,
    });
    const which = cmd.positionals[0];
    if (which !== 'coordinator' && which !== 'hermes')
      throw cmd.fail('the one server is `coordinator` (alias `hermes`)');
    const { adapterEnv } = await import('../../plugins/turns/preset.ts');
    const { checkReport, serveCoordinator } = await import('./coordinator-server.ts');
    let settings: ReturnType<typeof adapterEnv>;
    try {
      settings = adapterEnv(io.env);
    } catch (error) {
      throw cmd.fail((error as Error).message);
    }
    if (cmd.values.check) {
      const report = checkReport(settings);
      cmd.print(report, `ok: ${report.server} (${report.tools.length} tools)\n`);
      return 0;
    }
    const key = cmd.operatorKey();
    if ('missing' in key) {
      throw cmd.fail(`no operator key: pass --key, set WARREN_API_KEY, or create ${key.missing}`, 1);
    }
    return serveCoordinator(new URL(cmd.url()), cmd.headers(key.key), settings, io.stderr);
  },
};
