import { z } from 'zod';
import { parseConfig } from '../errors.ts';
import type { AgentSpec } from '../types.ts';

export type PermissionPolicy = 'allow' | 'deny';
export type McpMode = 'auto' | 'http' | 'stdio' | 'none';

const DEFAULT_START_TIMEOUT_MS = 120_000;

/** `config` of an `acp` spawn, besides `command` and `args` (see `command/config.ts`). */
const schema = z.looseObject({
  /** How permission requests are answered: `deny` (the default) refuses anything not explicitly allowed. */
  permission: z.enum(['allow', 'deny'], { error: "must be 'allow' or 'deny'" }).default('deny'),
  /** How warren is offered as an MCP server: by what the agent advertises (`auto`), or forced. */
  mcp: z
    .enum(['auto', 'http', 'stdio', 'none'], { error: 'must be auto, http, stdio or none' })
    .default('auto'),
  /** A session mode to switch to (by id or name), when the agent advertises it. */
  mode: z.string({ error: 'must be a string' }).nullish(),
  /** How long `initialize` plus `session/new` (or load) may take. */
  startTimeoutMs: z
    .number({ error: 'must be a positive number' })
    .positive('must be a positive number')
    .default(DEFAULT_START_TIMEOUT_MS),
});

export interface AcpConfig {
  permission: PermissionPolicy;
  mcp: McpMode;
  mode: string | null;
  startTimeoutMs: number;
}

export function readConfig(spec: AgentSpec): AcpConfig {
  const c = parseConfig('acp', schema, spec.config);
  return { permission: c.permission, mcp: c.mcp, mode: c.mode ?? null, startTimeoutMs: c.startTimeoutMs };
}
