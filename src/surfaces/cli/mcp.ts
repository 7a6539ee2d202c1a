import { parseArgs } from 'node:util';
import { readOperatorKey } from '../../vocab/key-file.ts';
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
    'warren mcp [--url http://127.0.0.1:7700] [--token <session token> | --key <operator key>] [--zone <zone>]',
    '',
    'Credentials: --token or WARREN_TOKEN (an agent), else --key or WARREN_API_KEY, else <data-dir>/operator.key.',
    'Requests that arrive while it connects wait for the connection; none is dropped.',
    'Example MCP client config:',
    '  { "mcpServers": { "warren": { "command": "./bin/warren.js", "args": ["mcp"], "env": { "WARREN_TOKEN": "wst_…" } } } }',
  ].join('\n'),
  async run(args: string[], io: CliIO): Promise<number> {
    const { values } = parseArgs({
      args,
      strict: true,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        key: { type: 'string' },
        zone: { type: 'string' },
        'data-dir': { type: 'string' },
      },
    });
    const env = io.env;
    const url = values.url ?? env.WARREN_URL ?? 'http://127.0.0.1:7700';
    let credential = values.token ?? env.WARREN_TOKEN ?? values.key ?? env.WARREN_API_KEY;
    if (!credential) {
      const saved = readOperatorKey(values['data-dir'], env);
      if ('missing' in saved) {
        io.stderr.write(
          `warren mcp: no credentials: set WARREN_TOKEN, pass --key, or create ${saved.missing} (warren serve does)\n`,
        );
        return 1;
      }
      credential = saved.key;
    }
    const zone = values.zone ?? env.WARREN_ZONE;
    const headers = { authorization: `Bearer ${credential}`, ...(zone ? { 'x-warren-zone': zone } : {}) };
    const { bridge } = await import('./mcp-bridge.ts');
    return bridge(new URL('/mcp', url), headers, io.stderr);
  },
};
