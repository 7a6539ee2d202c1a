import { z } from 'zod';
import { parseConfig } from '../errors.ts';
import type { AgentSpec } from '../types.ts';

const DEFAULT_MCP_TIMEOUT_MS = 30_000;

/** A list of strings, given as an array or as one comma-separated string. */
const stringList = z
  .union([z.array(z.string()), z.string()], { error: 'must be a list of strings' })
  .transform((v) =>
    Array.isArray(v)
      ? v
      : v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
  );

/** `config` of a `claude-code` spawn. */
const schema = z.looseObject({
  /** The `claude` executable (else WARREN_CLAUDE_BIN, node_modules/.bin, PATH). */
  claudePath: z.string({ error: 'must be a string' }).min(1).optional(),
  /** More tools allowed without asking, besides warren's granted ones. */
  allowedTools: stringList.default([]),
  /** The CLI's built-in tool set (`--tools`; unset: builtin-tools.ts's WORK_TOOLS, `default`: the CLI's whole set). */
  tools: stringList.transform((v) => v.join(',')).optional(),
  permissionMode: z.string({ error: 'must be a string' }).optional(),
  /** warren's note appended to the system prompt; false leaves it out. */
  appendSystemPrompt: z
    .union([z.string(), z.literal(false)], { error: 'must be a string or false' })
    .optional(),
  /** Extra CLI arguments, last. */
  args: stringList.default([]),
  /**
   * More MCP servers, each a unix socket speaking newline-delimited JSON-RPC (a group's
   * router.sock): name -> socket path. Each becomes seed 002's entry, `socat STDIO
   * UNIX-CONNECT:<path>`, and its tools (`mcp__<name>__*`) are allowed. Sockets, not
   * commands: a spawn cannot smuggle in a program to run this way.
   */
  mcpSockets: z
    .record(
      z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a server name is lowercase letters, digits, - and _'),
      z.string().min(1).max(200).startsWith('/', 'must be an absolute socket path'),
    )
    .refine((v) => !('warren' in v), 'warren is the name of warren’s own server')
    .default({}),
  /** How long warren's MCP server may take to be `connected`. */
  mcpTimeoutMs: z
    .number({ error: 'must be a positive number' })
    .positive('must be a positive number')
    .default(DEFAULT_MCP_TIMEOUT_MS),
});

export type ClaudeConfig = z.output<typeof schema>;

export const readConfig = (spec: AgentSpec): ClaudeConfig => parseConfig('claude-code', schema, spec.config);
