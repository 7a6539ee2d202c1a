/**
 * Every setting a user can reach, once: its key path in the config file, its environment
 * variable and its `warren serve` flag. The schema, the file reader, the flag parser, the
 * help text, `warren config show` and docs/configuration.md all follow this table.
 *
 * Loaded by `warren --help` (through the serve command's usage), so it imports nothing:
 * no zod, no kernel. Defaults live in defaults.ts, validation in schema.ts.
 */

/** How a value is written in an environment variable or on the command line. */
export type KeyKind =
  | 'string'
  | 'port'
  | 'int'
  | 'durability'
  /** A number of days, or `never` (null). */
  | 'days'
  /** A number of seconds, or `none` (null). */
  | 'seconds'
  /** Comma-separated names. */
  | 'list'
  /** Comma-separated `name=number` pairs. */
  | 'counts'
  /** A JSON object. */
  | 'json'
  /** `true` or `false`. */
  | 'bool';

export interface ConfigKey {
  /** Dotted path in the config file, e.g. `limits.maxDepth`. */
  path: string;
  env: string;
  /** The `warren serve` flag, without the dashes. */
  flag: string;
  kind: KeyKind;
  summary: string;
  /** How the value is written in help, when the kind's hint says too little (`<dir>`). */
  hint?: string;
  /** Not read from the file (the data dir is where the file is looked for). */
  notInFile?: boolean;
  /** What leaving it unset means, as `config show` says it (else by its kind: never, none, not set). */
  unset?: string;
}

const TIER_SUMMARY = (tier: string, depth: string) =>
  `depth-tier policy: the tools of every session at depth ${depth} (${tier} tier), instead of its job's, before grants`;

export const CONFIG_KEYS: readonly ConfigKey[] = [
  {
    path: 'server.host',
    env: 'WARREN_HOST',
    flag: 'host',
    kind: 'string',
    hint: '<address>',
    summary: 'address to listen on',
  },
  { path: 'server.port', env: 'WARREN_PORT', flag: 'port', kind: 'port', summary: 'port (0: any free one)' },
  {
    path: 'server.dataDir',
    env: 'WARREN_DATA_DIR',
    flag: 'data-dir',
    kind: 'string',
    hint: '<dir>',
    summary: 'data dir: database, operator key, sockets, the config file',
    notInFile: true,
  },
  {
    path: 'server.db',
    env: 'WARREN_DB',
    flag: 'db',
    kind: 'string',
    hint: '<file|url>',
    summary: 'SQLite file or postgres://…[?schema=name] (default <data dir>/warren.db)',
  },
  {
    path: 'server.dbPoolMax',
    env: 'WARREN_DB_POOL_MAX',
    flag: 'db-pool-max',
    kind: 'int',
    summary: "PostgreSQL: the reader pool's size (the writer has one connection of its own)",
  },
  {
    path: 'server.durability',
    env: 'WARREN_DURABILITY',
    flag: 'durability',
    kind: 'durability',
    summary: 'process: survives a kernel crash; power: survives power loss',
  },
  {
    path: 'nodeId',
    env: 'WARREN_NODE_ID',
    flag: 'node-id',
    kind: 'string',
    hint: '<id>',
    summary: "marks this node's agent processes (default: derived from data dir and db)",
  },
  {
    path: 'cluster.mode',
    env: 'WARREN_CLUSTER',
    flag: 'cluster',
    kind: 'string',
    hint: '<auto|on|off>',
    summary:
      'several nodes on one PostgreSQL (docs/scaling.md): auto joins on PostgreSQL; on is an error on SQLite',
  },
  {
    path: 'cluster.leaseMs',
    env: 'WARREN_CLUSTER_LEASE_MS',
    flag: 'cluster-lease-ms',
    kind: 'int',
    summary:
      'a node that has not renewed its lease this long (plus a margin of max(10 %, 250 ms)) is lost; the others take its sessions',
  },
  {
    path: 'cluster.heartbeatMs',
    env: 'WARREN_CLUSTER_HEARTBEAT_MS',
    flag: 'cluster-heartbeat-ms',
    kind: 'int',
    summary: 'how often a node renews its lease (at most a quarter lease) and looks for lost nodes',
  },
  {
    path: 'cluster.pollMs',
    env: 'WARREN_CLUSTER_POLL_MS',
    flag: 'cluster-poll-ms',
    kind: 'int',
    summary: "the most a lost notification delays delivery of another node's commits",
  },
  {
    path: 'limits.maxDepth',
    env: 'WARREN_MAX_DEPTH',
    flag: 'max-depth',
    kind: 'int',
    summary: 'deepest spawn (init is 0)',
  },
  {
    path: 'limits.maxChildren',
    env: 'WARREN_MAX_CHILDREN',
    flag: 'max-children',
    kind: 'int',
    summary: "live children per session (init's are bounded by the zone limit)",
  },
  {
    path: 'limits.maxSessionsPerZone',
    env: 'WARREN_MAX_SESSIONS_PER_ZONE',
    flag: 'max-sessions-per-zone',
    kind: 'int',
    summary: 'live sessions per zone (init not counted)',
  },
  {
    path: 'limits.maxSessionsPerRuntime',
    env: 'WARREN_MAX_SESSIONS_PER_RUNTIME',
    flag: 'max-sessions-per-runtime',
    kind: 'counts',
    summary: 'live sessions per zone of one runtime, e.g. claude-code=5,codex=2',
  },
  {
    path: 'limits.maxSearchMs',
    env: 'WARREN_MAX_SEARCH_MS',
    flag: 'max-search-ms',
    kind: 'int',
    summary: 'SQLite: a full-text search (it runs in a worker thread) running longer is stopped',
  },
  {
    path: 'limits.callsPerTurn',
    env: 'WARREN_CALLS_PER_TURN',
    flag: 'calls-per-turn',
    kind: 'int',
    summary: 'calls started in one turn of the event loop; more wait, round robin by caller',
  },
  {
    path: 'limits.callSliceMs',
    env: 'WARREN_CALL_SLICE_MS',
    flag: 'call-slice-ms',
    kind: 'int',
    summary: "after a turn's first call, more start only while the turn has spent less than this (ms)",
  },
  {
    path: 'tiers.root',
    unset: '(jobs decide)',
    env: 'WARREN_TIER_ROOT',
    flag: 'tier-root',
    kind: 'list',
    summary: TIER_SUMMARY('root', '0'),
  },
  {
    path: 'tiers.orchestrator',
    unset: '(jobs decide)',
    env: 'WARREN_TIER_ORCHESTRATOR',
    flag: 'tier-orchestrator',
    kind: 'list',
    summary: TIER_SUMMARY('orchestrator', '1'),
  },
  {
    path: 'tiers.agent',
    unset: '(jobs decide)',
    env: 'WARREN_TIER_AGENT',
    flag: 'tier-agent',
    kind: 'list',
    summary: TIER_SUMMARY('agent', '2'),
  },
  {
    path: 'tiers.worker',
    unset: '(jobs decide)',
    env: 'WARREN_TIER_WORKER',
    flag: 'tier-worker',
    kind: 'list',
    summary: TIER_SUMMARY('worker', '3 and deeper'),
  },
  {
    path: 'grants.allow',
    unset: '(every tool)',
    env: 'WARREN_GRANTS_ALLOW',
    flag: 'grants-allow',
    kind: 'list',
    summary: 'every session may call at most the tools these match (`*` wildcards)',
  },
  {
    path: 'grants.deny',
    unset: '(nothing)',
    env: 'WARREN_GRANTS_DENY',
    flag: 'grants-deny',
    kind: 'list',
    summary: 'no session may call the tools these match (deny wins)',
  },
  {
    path: 'containment',
    env: 'WARREN_CONTAINMENT',
    flag: 'containment',
    kind: 'string',
    hint: '<auto|bwrap|none>',
    summary:
      'confine agent processes (docs/security.md): auto uses bubblewrap where it works, else refuses agents that run shells; bwrap requires it; none runs agents unconfined',
  },
  {
    path: 'containmentNetwork',
    env: 'WARREN_CONTAINMENT_NETWORK',
    flag: 'containment-network',
    kind: 'string',
    hint: '<full|none>',
    summary:
      "confined agents' default and most network (a spawn's network grant may narrow it): full, or none (warren stays reachable)",
  },
  {
    path: 'grants.env',
    env: 'WARREN_GRANTS_ENV',
    flag: 'grants-env',
    kind: 'list',
    summary:
      "more variable names (`*` wildcards) a session may set in a child's environment, beyond AGENT_*, credentials and model settings",
  },
  {
    path: 'termGraceMs',
    env: 'WARREN_TERM_GRACE_MS',
    flag: 'term-grace-ms',
    kind: 'int',
    summary: 'SIGTERM grace period before the kernel sends SIGKILL',
  },
  {
    path: 'shutdownGraceMs',
    env: 'SHUTDOWN_GRACE_MS',
    flag: 'shutdown-grace-ms',
    kind: 'int',
    summary:
      'on shutdown, the longest to wait for in-flight requests, live streams and background runs before cutting them off',
  },
  {
    path: 'maxWaitMs',
    env: 'WARREN_MAX_WAIT_MS',
    flag: 'max-wait-ms',
    kind: 'int',
    summary: 'longest a blocking read or wait holds before answering "wait again"',
  },
  {
    path: 'syncSpawnWaitMs',
    env: 'WARREN_SYNC_SPAWN_WAIT_MS',
    flag: 'sync-spawn-wait-ms',
    kind: 'int',
    summary:
      "longest `ipc_spawn` with pipe 'sync' blocks for the child's result before answering \"still running, wait again\"",
  },
  {
    path: 'reconcileIntervalMs',
    env: 'WARREN_RECONCILE_INTERVAL_MS',
    flag: 'reconcile-interval-ms',
    kind: 'int',
    summary: 'reconciliation tick',
  },
  {
    path: 'defaultTtlSeconds',
    env: 'WARREN_DEFAULT_TTL_SECONDS',
    flag: 'default-ttl-seconds',
    kind: 'seconds',
    summary: 'TTL of a session spawned without one (none: no limit)',
  },
  {
    path: 'retentionDays',
    env: 'WARREN_RETENTION_DAYS',
    flag: 'retention-days',
    kind: 'days',
    summary: 'events older than this are deleted (never: keep all)',
  },
  {
    path: 'sessionRetentionDays',
    env: 'WARREN_SESSION_RETENTION_DAYS',
    flag: 'session-retention-days',
    kind: 'days',
    summary: 'stopped sessions, closed streams are deleted after this (never: keep)',
  },
  {
    path: 'plugins.enable',
    unset: '(all: a new database enables every plugin)',
    env: 'WARREN_PLUGINS',
    flag: 'plugins',
    kind: 'list',
    summary:
      'optional plugins a NEW database enables (default: all); afterwards `warren plugin enable|disable` decides',
  },
  {
    path: 'plugins.settings',
    env: 'WARREN_PLUGIN_SETTINGS',
    flag: 'plugin-settings',
    kind: 'json',
    hint: '<json>',
    summary: 'each plugin\'s settings, by plugin name: {"orchestration": {…}}',
  },
  {
    path: 'auth.issuerUrl',
    unset: '(off: no external JWTs)',
    env: 'ISSUER_URL',
    flag: 'issuer-url',
    kind: 'string',
    hint: '<url>',
    summary: 'accept bearer JWTs of this issuer (JWKS at {issuer}/.well-known/jwks.json, aud = issuer)',
  },
  {
    path: 'auth.scope',
    env: 'AGENT_COORDINATOR_SCOPE',
    flag: 'coordinator-scope',
    kind: 'string',
    summary: 'the scope a bearer JWT must carry',
  },
  {
    path: 'auth.zoneClaim',
    env: 'WARREN_JWT_ZONE_CLAIM',
    flag: 'jwt-zone-claim',
    kind: 'string',
    summary: "the JWT claim naming the token's zone (checked against /zones/:zoneId)",
  },
  {
    path: 'auth.jwksCacheMax',
    env: 'JWKS_CACHE_MAX',
    flag: 'jwks-cache-max',
    kind: 'int',
    summary: 'most JWKS keys kept (least recently used first out)',
  },
  {
    path: 'mcp.maxSessionsPerCaller',
    env: 'WARREN_MCP_MAX_SESSIONS_PER_CALLER',
    flag: 'mcp-max-sessions-per-caller',
    kind: 'int',
    summary: 'open MCP sessions over Streamable HTTP one credential may hold at once (429 past it)',
  },
  {
    path: 'mcp.idleMs',
    env: 'WARREN_MCP_IDLE_MS',
    flag: 'mcp-idle-ms',
    kind: 'int',
    summary: 'an MCP session with no request and no stream open this long is closed, freeing its slot',
  },
  {
    path: 'sockets.maxLineBytes',
    env: 'WARREN_SOCKET_MAX_LINE_BYTES',
    flag: 'socket-max-line-bytes',
    kind: 'int',
    summary: 'MCP unix sockets: a longer line closes its connection, with an error line saying why',
  },
  {
    path: 'sockets.maxConnections',
    env: 'WARREN_SOCKET_MAX_CONNECTIONS',
    flag: 'socket-max-connections',
    kind: 'int',
    summary: 'MCP unix sockets: connections open at once per socket; one more is refused with an error line',
  },
  {
    path: 'log.level',
    env: 'LOG_LEVEL',
    flag: 'log-level',
    kind: 'string',
    hint: 'fatal|error|warn|info|debug|trace|silent',
    summary: 'JSON log lines on stderr at this level and above (silent: none)',
  },
  {
    path: 'gateway.enabled',
    env: 'WARREN_GATEWAY',
    flag: 'gateway',
    kind: 'bool',
    summary:
      "claude-code and codex agents reach their model through warren's gateway, which holds their keys, meters their usage and checks budgets before each call",
  },
  {
    path: 'gateway.prices',
    unset: '(the built-in table)',
    env: 'WARREN_GATEWAY_PRICES',
    flag: 'gateway-prices',
    kind: 'json',
    hint: '<json>',
    summary:
      'model prices over the built-in table, USD per million tokens: {"claude-sonnet-4*": {"input": 3, "output": 15}}',
  },
  {
    path: 'gateway.concurrency',
    env: 'WARREN_GATEWAY_CONCURRENCY',
    flag: 'gateway-concurrency',
    kind: 'int',
    summary:
      'model calls in flight per provider key at the gateway, across all agents on it (0: no limit); the rest wait their turn',
  },
  {
    path: 'gateway.retries',
    env: 'WARREN_GATEWAY_RETRIES',
    flag: 'gateway-retries',
    kind: 'int',
    summary:
      'how many times the gateway holds and retries a 429 or 529 answer (honouring retry-after) before passing it to the agent',
  },
  {
    path: 'gateway.maxRetryWaitMs',
    env: 'WARREN_GATEWAY_MAX_RETRY_WAIT_MS',
    flag: 'gateway-max-retry-wait-ms',
    kind: 'int',
    summary: 'the longest the gateway holds one call for its retries, all waits together',
  },
  {
    path: 'gateway.rpm',
    env: 'WARREN_GATEWAY_RPM',
    flag: 'gateway-rpm',
    kind: 'int',
    summary:
      'model requests per minute per provider key at the gateway (0: none); a call past it waits, as it does when the provider says none are left',
  },
  {
    path: 'gateway.tpm',
    env: 'WARREN_GATEWAY_TPM',
    flag: 'gateway-tpm',
    kind: 'int',
    summary:
      'model tokens (input and output) per minute per provider key at the gateway (0: none); a call past it waits',
  },
  {
    path: 'gateway.breakerFailures',
    env: 'WARREN_GATEWAY_BREAKER_FAILURES',
    flag: 'gateway-breaker-failures',
    kind: 'int',
    summary:
      "failed calls in a row (5xx, 529 or no answer, after retries) that open a provider key's circuit breaker (0: no breaker)",
  },
  {
    path: 'gateway.breakerCoolMs',
    env: 'WARREN_GATEWAY_BREAKER_COOL_MS',
    flag: 'gateway-breaker-cool-ms',
    kind: 'int',
    summary: 'how long an open breaker refuses calls at once before one goes through as a probe',
  },
  {
    path: 'metrics.enabled',
    env: 'WARREN_METRICS',
    flag: 'metrics',
    kind: 'bool',
    summary: 'serve Prometheus metrics at GET /metrics',
  },
  {
    path: 'metrics.public',
    env: 'WARREN_METRICS_PUBLIC',
    flag: 'metrics-public',
    kind: 'bool',
    summary: 'GET /metrics without credentials, only when bound to a loopback address',
  },
  {
    path: 'tracing.endpoint',
    unset: '(off: no traces exported)',
    env: 'WARREN_OTLP_ENDPOINT',
    flag: 'otlp-endpoint',
    kind: 'string',
    hint: '<url>',
    summary: 'OTLP/HTTP collector (base URL, like OTEL_EXPORTER_OTLP_ENDPOINT): turns traces on',
  },
];

/** The config file names looked for in the data dir, in this order. */
export const CONFIG_FILES = ['warren.config.json', 'warren.config.yaml', 'warren.config.yml'] as const;

/** `--config <file>` / WARREN_CONFIG: read this file instead of looking in the data dir. */
export const CONFIG_FILE_ENV = 'WARREN_CONFIG';
export const CONFIG_FILE_FLAG = 'config';

/** How a kind is written on the command line, for help text. */
export const KIND_HINT: Record<KeyKind, string> = {
  string: '<text>',
  port: '<0-65535>',
  int: '<n>',
  durability: 'process|power',
  days: '<days>|never',
  seconds: '<s>|none',
  list: '<a,b,…>',
  counts: '<name=n,…>',
  json: '<json>',
  bool: 'true|false',
};
