import { z } from 'zod';
import { CONFIG_KEYS, type ConfigKey, type KeyKind } from './keys.ts';

/**
 * What each setting may hold, as zod schemas: one per key (environment variables and flags
 * are checked with the same one as the file), and the file's shape built from them.
 */

const positiveInt = z.number().int().positive();
const names = z.array(z.string().min(1, 'expected a non-empty name'));

/** Node ids end up in process marks and in `LIKE 'id.%'` patterns: keep them plain. */
export const NODE_ID = /^[A-Za-z0-9-]{1,64}$/;

export const LEAF_SCHEMAS: Record<string, z.ZodType> = {
  'server.host': z.string().min(1),
  'server.port': z.number().int().min(0).max(65535),
  'server.dataDir': z.string().min(1),
  'server.db': z.string().min(1),
  'server.dbPoolMax': positiveInt.max(1000),
  'server.durability': z.enum(['process', 'power']),
  nodeId: z.string().regex(NODE_ID, 'expected 1-64 letters, digits or "-"'),
  'cluster.mode': z.enum(['auto', 'on', 'off']),
  'cluster.leaseMs': z.number().int().min(500),
  'cluster.heartbeatMs': z.number().int().min(50),
  'cluster.pollMs': z.number().int().min(10),
  'limits.maxDepth': positiveInt,
  'limits.maxChildren': positiveInt,
  'limits.maxSessionsPerZone': positiveInt,
  'limits.maxSessionsPerRuntime': z.record(z.string().min(1), positiveInt),
  'limits.maxSearchMs': z.number().int().min(100).max(600_000),
  'limits.callsPerTurn': z.number().int().min(1).max(10_000),
  'limits.callSliceMs': z.number().min(0).max(1_000),
  'tiers.root': names,
  'tiers.orchestrator': names,
  'tiers.agent': names,
  'tiers.worker': names,
  'grants.allow': names,
  'grants.deny': names,
  containment: z.enum(['auto', 'bwrap', 'none']),
  containmentNetwork: z.enum(['full', 'none']),
  'grants.env': z.array(
    z.string().regex(/^[A-Za-z_*][A-Za-z0-9_*]*$/, 'expected a variable name, `*` wildcards allowed'),
  ),
  termGraceMs: z.number().int().min(0),
  shutdownGraceMs: z.number().int().min(0),
  // MCP clients (the SDK's default) give up on a request after 60 s: a wait must answer first.
  maxWaitMs: positiveInt.max(55_000, 'expected at most 55000 (MCP clients time a request out at 60 s)'),
  syncSpawnWaitMs: positiveInt.max(55_000, 'expected at most 55000 (MCP clients time a request out at 60 s)'),
  // A tick that repeats faster than this would spend the machine on repairs.
  reconcileIntervalMs: z.number().int().min(100),
  defaultTtlSeconds: positiveInt.nullable(),
  retentionDays: z.number().positive().nullable(),
  sessionRetentionDays: z.number().positive().nullable(),
  'plugins.enable': names.nullable(),
  'plugins.settings': z.record(z.string().min(1), z.record(z.string(), z.unknown())),
  'auth.issuerUrl': z.url({ protocol: /^https?$/ }).nullable(),
  'auth.scope': z.string().min(1).max(200),
  'auth.zoneClaim': z.string().min(1).max(100),
  'auth.jwksCacheMax': positiveInt.max(10_000),
  'mcp.maxSessionsPerCaller': positiveInt.max(100_000),
  // Below this a session would expire between a client's requests.
  'mcp.idleMs': z.number().int().min(100).max(86_400_000),
  // A line must hold an MCP request; 1 GiB is far past any (the cap bounds memory per connection).
  'sockets.maxLineBytes': z
    .number()
    .int()
    .min(4096)
    .max(1024 ** 3),
  'sockets.maxConnections': positiveInt.max(100_000),
  'log.level': z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  'gateway.enabled': z.boolean(),
  'gateway.prices': z.record(
    z.string().min(1).max(200),
    z.strictObject({
      input: z.number().min(0),
      output: z.number().min(0),
      cacheRead: z.number().min(0).optional(),
      cacheWrite: z.number().min(0).optional(),
    }),
  ),
  'gateway.concurrency': z.number().int().min(0).max(10_000),
  'gateway.retries': z.number().int().min(0).max(20),
  'gateway.maxRetryWaitMs': z.number().int().min(0).max(600_000),
  'gateway.rpm': z.number().int().min(0).max(10_000_000),
  'gateway.tpm': z.number().int().min(0).max(1_000_000_000),
  'gateway.breakerFailures': z.number().int().min(0).max(1000),
  'gateway.breakerCoolMs': z.number().int().min(0).max(3_600_000),
  'metrics.enabled': z.boolean(),
  'metrics.public': z.boolean(),
  'tracing.endpoint': z.url({ protocol: /^https?$/ }).nullable(),
};

export const leafSchema = (key: ConfigKey): z.ZodType => {
  const schema = LEAF_SCHEMAS[key.path];
  if (!schema) throw new Error(`no schema for config key ${key.path}`);
  return schema;
};

/** The file: nested objects of optional keys; an unknown key is an error, not a silent no-op. */
export function fileSchema(): z.ZodType {
  type Tree = { [name: string]: Tree | z.ZodType };
  const tree: Tree = {};
  for (const key of CONFIG_KEYS) {
    if (key.notInFile) continue;
    const parts = key.path.split('.');
    let node = tree;
    for (const part of parts.slice(0, -1)) {
      node[part] ??= {};
      node = node[part] as Tree;
    }
    node[parts.at(-1)!] = leafSchema(key).optional();
  }
  const build = (t: Tree): z.ZodType =>
    z.strictObject(
      Object.fromEntries(
        Object.entries(t).map(([k, v]) => [k, v instanceof z.ZodType ? v : build(v).optional()]),
      ),
    );
  return build(tree);
}

/**
 * A value as written in an environment variable or a flag, turned into what the schema
 * checks. Text that cannot be read as the kind is passed through, so the schema's message
 * ("expected number, received string") names the problem.
 */
export function fromText(kind: KeyKind, text: string): unknown {
  const t = text.trim();
  const number = /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
  switch (kind) {
    case 'string':
    case 'durability':
      return t;
    case 'port':
    case 'int':
      return number;
    case 'days':
      return t === 'never' ? null : number;
    case 'seconds':
      return t === 'none' ? null : number;
    case 'list':
      return t
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    case 'counts':
      return countsFromText(t);
    case 'bool':
      return t === 'true' ? true : t === 'false' ? false : t;
    case 'json':
      try {
        return JSON.parse(t);
      } catch {
        return t;
      }
  }
}

function countsFromText(t: string): unknown {
  const out: Record<string, unknown> = {};
  for (const pair of t
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([^=\s]+)\s*=\s*(.+)$/.exec(pair);
    if (!m) return t;
    out[m[1]!] = /^\d+$/.test(m[2]!) ? Number(m[2]) : m[2];
  }
  return out;
}
