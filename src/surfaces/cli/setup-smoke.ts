import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { COORDINATOR_PRESET, SERVER_NAME } from '../../plugins/turns/preset.ts';
import { packageRoot } from '../../util/package-root.ts';

const WARREN_BIN = join(packageRoot(import.meta.url), 'bin', 'warren.js');
const SMOKE_TIMEOUT_MS = 20_000;

/**
 * Start the rendered server the way a controller would (stdio), complete the MCP handshake
 * and list its tools: the contract holds when every preset tool is there. No tool is called,
 * so no warren server, model or credential is needed.
 */
export async function smokeCheck(
  env: Record<string, string>,
  parent: NodeJS.ProcessEnv,
): Promise<{ ok: boolean; server?: string; tools?: string[]; error?: string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [WARREN_BIN, 'mcp-serve', 'coordinator'],
    env: {
      ...(Object.fromEntries(Object.entries(parent).filter(([, v]) => v !== undefined)) as Record<
        string,
        string
      >),
      ...env,
      // The adapter wants a key before serving; the smoke calls no tool, so none is used.
      WARREN_API_KEY: parent.WARREN_API_KEY ?? 'smoke-check-calls-nothing',
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'warren-setup-smoke', version: '1.0.0' });
  try {
    await client.connect(transport, { timeout: SMOKE_TIMEOUT_MS });
    const server = client.getServerVersion()?.name ?? '';
    const tools = (await client.listTools(undefined, { timeout: SMOKE_TIMEOUT_MS })).tools.map((t) => t.name);
    const missing = COORDINATOR_PRESET.map((t) => t.name).filter((n) => !tools.includes(n));
    if (server !== SERVER_NAME) return { ok: false, server, tools, error: `server is ${server}` };
    if (missing.length) return { ok: false, server, tools, error: `missing tools: ${missing.join(', ')}` };
    return { ok: true, server, tools };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  } finally {
    await client.close().catch(() => {});
  }
}
