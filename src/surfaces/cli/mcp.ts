import { preamble } from './preamble.ts';
import type { CliIO, LocalCommand } from './types.ts';

/**
 * `warren mcp`: an MCP server on stdio that forwards every message to a running warren's
 * `/mcp` (Streamable HTTP) and back, for clients that only speak stdio. It holds no logic:
 * identity, gating and tools are the daemon's. The relay (and the MCP SDK) load only here.
 */
export const mcpCommand: LocalCommand = {
  command: ['mcp'],
  summary: 'An MCP server on stdio that proxies to the running warren',
  usage: [
    'warren mcp [--url http://127.0.0.1:7700] [--token <session token> | --key <operator key>] [--zone <zone>] [--tools <groups|all>]',
    '',
    "--tools schedules,groups (or all): an operator's tool list starts with these groups on, beside its defaults",
    '(tools_groups lists them; tools_enable turns more on). A session token lists what its session holds.',
    'Credentials: --token or WARREN_TOKEN (an agent), else --key or WARREN_API_KEY, else <data-dir>/operator.key.',
    'Requests that arrive while it connects wait for the connection; none is dropped.',
    'It ends its MCP session on the server (DELETE /mcp) when its input ends, on SIGINT, SIGTERM or SIGHUP, and when its output closes.',
    'Example MCP client config:',
    '  { "mcpServers": { "warren": { "command": "./bin/warren.js", "args": ["mcp"], "env": { "WARREN_TOKEN": "wst_…" } } } }',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const cmd = preamble(args, io, {
      words: ['mcp'],
      globals: ['url', 'key', 'zone', 'data-dir'],
      options: { token: { type: 'string' }, tools: { type: 'string' } },
    });
    // An agent's session token, else the operator key.
    const token = cmd.values.token || io.env.WARREN_TOKEN;
    const credential = token ? { key: token } : cmd.operatorKey();
    if ('missing' in credential) {
      throw cmd.fail(
        `no credentials: set WARREN_TOKEN, pass --key, or create ${credential.missing} (warren serve does)`,
        1,
      );
    }
    const { bridge } = await import('./mcp-bridge.ts');
    const url = new URL('/mcp', cmd.url());
    if (cmd.values.tools) url.searchParams.set('tools', String(cmd.values.tools));
    return bridge(url, cmd.headers(credential.key), io.stderr);
  },
};
