import { preamble } from './preamble.ts';
import type { CliIO, LocalCommand } from './types.ts';

/**
 * `warren runner`: runs agents on this host for a server elsewhere. It connects out over a
 * WebSocket (so it works behind NAT) and serves the environment `runner:<name>`. The runner
 * and its runtimes load only here.
 */
export const runnerCommand: LocalCommand = {
  command: ['runner'],
  summary: 'Run agents on this host for a remote warren (the environment runner:<name>)',
  usage: [
    'warren runner --server <url>[,<url>…] --token <runner token> [--name <name>] [--runtimes script,command] [--cwd-root <dir>]',
    '',
    '--server: a node of the warren; several (comma-separated or --server repeated): the nodes of',
    'one cluster. The runner connects to the first that answers; when it loses its node or sees it',
    'fenced, it connects to the next (round robin, backing off once the whole list has failed).',
    'The token comes from `warren runners create-token <name>` on the server (or WARREN_RUNNER_TOKEN).',
    '--name defaults to the name the token was created for; --runtimes to script,command.',
    '--cwd-root: agents run in this directory or below it (default: anywhere they ask).',
    'Agents reach the server through the runner (a loopback endpoint it opens); nothing else on',
    'this host needs to be reachable. Ctrl-C stops the runner and its agents; their sessions',
    'are suspended on the server and resume when a runner of that name connects again.',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const cmd = preamble(args, io, {
      words: ['runner'],
      options: {
        server: { type: 'string', multiple: true },
        token: { type: 'string' },
        name: { type: 'string' },
        runtimes: { type: 'string' },
        'cwd-root': { type: 'string' },
      },
    });
    const { values } = cmd;
    const servers = (values.server ?? (io.env.WARREN_URL ? [io.env.WARREN_URL] : []))
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    const token = values.token ?? io.env.WARREN_RUNNER_TOKEN;
    const name = values.name ?? io.env.WARREN_RUNNER_NAME ?? '';
    if (servers.length === 0 || !token)
      throw cmd.fail('--server and --token are required (see warren runner --help)');
    const { builtinRuntimes } = await import('../../runtimes/registry.ts');
    const all = builtinRuntimes();
    const wanted = (values.runtimes ?? 'script,command')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = wanted.filter((r) => !all.has(r));
    if (unknown.length > 0) {
      throw cmd.fail(`unknown runtimes ${unknown.join(', ')}; known: ${[...all.keys()].join(', ')}`);
    }
    const runtimes = new Map(wanted.map((r) => [r, all.get(r)!]));
    const { Runner } = await import('../../plugins/runners/runner/client.ts');
    const runner = new Runner({
      servers,
      token,
      name,
      runtimes,
      cwdRoot: values['cwd-root'] ?? null,
      log: (line) => io.stderr.write(`${line}\n`),
    });
    await runner.start();
    const stop = () => void runner.stop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const code = await runner.done;
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    return code;
  },
};
