import { mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { CliError } from './errors.ts';
import { preamble } from './preamble.ts';
import { type CliIO, EXIT_USAGE, type LocalCommand } from './types.ts';

/**
 * `warren setup hermes`: the setup adapter of the coordinator bridge. It renders (default:
 * writes nothing) or installs an MCP config for a controller that takes Hermes-style
 * `mcp_servers`, and `--smoke` checks the server and its tool contract over a real stdio
 * MCP handshake — no model is called, no provider credential is checked.
 */
export const setupCommand: LocalCommand = {
  command: ['setup'],
  summary: 'Render or install a controller MCP config for the coordinator bridge (hermes)',
  usage: [
    'warren setup hermes --root <dir> [--root <dir> …] [--profile <p>] [--repo <r>] [--mutation sessions,questions,reports]',
    '       [--worktree-name <name>] [--session-command <cmd>] [--url <warren url>] [--profile-dir <dir> --install] [--smoke] [--json]',
    '',
    'Default: print the config and write nothing. Sessions are worktree-isolated by default: it renders',
    'SESSION_COMMAND="warren --worktree" (seed 004\'s "skc --worktree", also accepted); --worktree-name pins',
    'a name; --session-command replaces it. --install writes <profile-dir>/warren-coordinator.mcp.json.',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const cmd = preamble(args, io, {
      words: ['setup', 'hermes'],
      // --url here is the server the config names (its WARREN_URL), not one this command calls.
      globals: ['url', 'json'],
      options: {
        root: { type: 'string', multiple: true },
        profile: { type: 'string' },
        repo: { type: 'string' },
        mutation: { type: 'string' },
        'worktree-name': { type: 'string' },
        'session-command': { type: 'string' },
        'profile-dir': { type: 'string' },
        install: { type: 'boolean' },
        smoke: { type: 'boolean' },
      },
      positionals: true,
    });
    const { values } = cmd;
    if (cmd.positionals[0] !== 'hermes')
      throw new CliError('the one target is `hermes`', EXIT_USAGE, 'setup');
    const roots = (values.root ?? []).map((r) => resolve(r));
    if (roots.length === 0) throw cmd.fail('--root is required (the working-directory allowlist)');
    const env: Record<string, string> = {
      SKC_COORDINATOR_MCP_WORKDIR_ROOTS: roots.join(delimiter),
      // Seed 004's form: the session command carries the worktree (`warren --worktree [name]`,
      // the seed's `skc --worktree` with warren's name); --session-command replaces it whole.
      SKC_COORDINATOR_MCP_SESSION_COMMAND:
        values['session-command'] ??
        (values['worktree-name'] ? `warren --worktree ${values['worktree-name']}` : 'warren --worktree'),
      // Both given: the command is the program, the name still pins the worktree.
      ...(values['session-command'] && values['worktree-name']
        ? { SKC_COORDINATOR_MCP_WORKTREE: values['worktree-name'] }
        : {}),
      ...(values.mutation ? { SKC_COORDINATOR_MCP_MUTATIONS: values.mutation } : {}),
      ...(values.profile ? { SKC_COORDINATOR_MCP_PROFILE: values.profile } : {}),
      ...(values.repo ? { SKC_COORDINATOR_MCP_REPO: values.repo } : {}),
      ...(values.url ? { WARREN_URL: values.url } : {}),
    };
    const { adapterEnv } = await import('../../plugins/turns/preset.ts');
    try {
      adapterEnv(env);
    } catch (error) {
      throw cmd.fail((error as Error).message);
    }
    const config = {
      mcp_servers: { 'warren-coordinator': { command: 'warren', args: ['mcp-serve', 'coordinator'], env } },
    };
    const text = `${JSON.stringify(config, null, 2)}\n`;
    let written: string | null = null;
    if (values.install) {
      const dir = values['profile-dir'];
      if (!dir) throw cmd.fail('--install needs --profile-dir');
      mkdirSync(dir, { recursive: true });
      written = join(resolve(dir), 'warren-coordinator.mcp.json');
      writeFileSync(written, text, { mode: 0o600 });
    }
    let smoke: { ok: boolean; server?: string; tools?: string[]; error?: string } | null = null;
    if (values.smoke) {
      const { smokeCheck } = await import('./setup-smoke.ts');
      smoke = await smokeCheck(env, io.env);
    }
    cmd.print(
      { config, installed: written, smoke },
      (!values.install && !values.smoke ? text : '') +
        (written ? `installed ${written}\n` : '') +
        (smoke
          ? smoke.ok
            ? `smoke ok: ${smoke.server}, ${smoke.tools?.length} tools\n`
            : `smoke failed: ${smoke.error}\n`
          : ''),
    );
    return smoke && !smoke.ok ? 1 : 0;
  },
};
