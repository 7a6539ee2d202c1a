/**
 * The tables, as the query layer sees them. Booleans are integers (0/1) and times are
 * epoch milliseconds so that one set of queries serves SQLite and PostgreSQL alike.
 */
import type { Generated } from 'kysely';

export type SessionStatus = 'pending' | 'running' | 'idle' | 'suspended' | 'stopped';
export type EndReason =
  | 'completed'
  | 'killed'
  | 'terminated'
  | 'crashed'
  | 'expired'
  | 'budget_exceeded'
  | 'reaped';
export type ParentClose = 'reparent' | 'terminate' | 'sigterm';
export type StreamKind = 'named' | 'pipe' | 'lifecycle' | 'stdin';
export type Permission = 'r' | 'w' | 'rw';
export type DeliveryMode = 'sync' | 'async' | 'detach';

export interface ZonesTable {
  id: string;
  created_at: number;
  max_depth: number | null;
  max_children: number | null;
  max_sessions: number | null;
}

export interface SessionsTable {
  id: string;
  zone: string;
  parent_id: string | null;
  depth: number;
  status: SessionStatus;
  end_reason: EndReason | null;
  runtime: string;
  runner: string;
  title: string | null;
  /** The spawn request (prompt, cwd, model, script, env …) as JSON: what resume needs. */
  spec: string;
  /** Runtime-owned resume state (script position, CLI session id …) as JSON. */
  runtime_state: string | null;
  parent_close: ParentClose;
  token_hash: string | null;
  idempotency_key: string | null;
  last_message: string | null;
  suspend_reason: string | null;
  /** SIGTERM grace deadline: past it the kernel sends SIGKILL. */
  term_deadline: number | null;
  expires_at: number | null;
  max_turns: number | null;
  turns: number;
  usage: string;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
  /** JSON array of the tools (syscall names) it may call; null: its tier's defaults. */
  tools: string | null;
  /** JSON of the grants asked for at spawn, for the record. */
  grants: string | null;
  /** JSON of its spawn grants (grants.ts), fixed at spawn; null on rows from before them. */
  spawn_grants?: string | null;
  /** Why it ended, in words (the error of a crash, who killed it …); null while live. */
  end_detail: string | null;
  /** What a live agent is doing beyond its status ("retrying model API, attempt 3/10"). */
  activity: string | null;
  /** The generation of its token; resume bumps it. Optional so inserts may omit it (default 0). */
  token_gen?: number;
  /** The persona it was spawned from (its name); null when none. */
  persona?: string | null;
  /** The model it runs (as its spec names it); null: the runtime's default. */
  model?: string | null;
  /** JSON Budget (kernel/types.ts) for its whole subtree, as granted at spawn; null: none. */
  budget: string | null;
  /** JSON array of the sessions it was spawned under, nearest first, init left out; null: none. */
  ancestors: string | null;
  /** JSON array of the budgeted sessions whose budgets cover it (itself first if budgeted); null: none. */
  budget_scope: string | null;
  /** When its wall-time budget runs out; null without one, once breached, and once stopped. */
  budget_deadline: number | null;
  /** JSON of the breach (limit, max, used, over) once its budget was exceeded; null until then. */
  budget_breach: string | null;
  /** Usage of it and everything spawned under it, kept by adding each report in place. */
  subtree_input_tokens: number;
  subtree_output_tokens: number;
  subtree_cost_usd: number;
  subtree_turns: number;
  /** The node that owns its agent process (docs/scaling.md); null until one started it. */
  owner_node?: string | null;
  /** That node's epoch when it took the session: its fencing token. */
  owner_epoch?: number | null;
  /** Who tells its parent about it: null, the kernel's SIGCHLD; else a plugin (its name) does. */
  reported_by?: string | null;
}

export interface StreamsTable {
  id: string;
  zone: string;
  name: string;
  kind: StreamKind;
  /** The principal that created it: a session id or `operator:<name>`. */
  owner: string;
  /** For reserved streams, the session they belong to. */
  session_id: string | null;
  self_echo: number;
  created_at: number;
  closed_at: number | null;
}

export interface FdsTable {
  id: string;
  zone: string;
  /** A session id or `operator:<name>`. */
  holder: string;
  /** The number the holder uses; never reused by that holder. */
  num: number;
  stream_id: string;
  perm: Permission;
  mode: DeliveryMode;
  /** The last seq delivered on this fd. */
  cursor: number;
  /** Created by spawn for the spawner: the holder must close it before it stops. */
  owned: number;
  /** Granted by spawn (as opposed to attach / create). */
  spawned: number;
  created_at: number;
  closed_at: number | null;
}

export interface EventsTable {
  seq: number;
  id: string;
  zone: string;
  ts: number;
  type: string;
  actor: string;
  session_id: string | null;
  stream_id: string | null;
  payload: string;
}

export interface LogHeadTable {
  id: number;
  seq: number;
}

export interface OperatorKeysTable {
  id: string;
  name: string;
  hash: string;
  created_at: number;
  revoked_at: number | null;
}

/** A browser login (the web UI's cookie session): only a hash of the cookie's token is kept. */
export interface UiSessionsTable {
  token_hash: string;
  operator: string;
  created_at: number;
  expires_at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** An agent process group a node started: ended by the next run if this one dies. */
export interface AgentProcsTable {
  session_id: string;
  pid: number;
  pgid: number;
  /** The kernel's start time of the process (survives pid reuse), when known. */
  start_time: string | null;
  boot_id: string | null;
  /** The kernel run that started it. */
  run_id: string;
  started_at: number;
}

/** A server process on this database (docs/scaling.md): its lease and fencing epoch. */
export interface NodesTable {
  id: string;
  /** Its public URL, once it listens. */
  address: string | null;
  /** JSON array of the runtimes it can run. */
  runtimes: string;
  /** Bumped at every join: a node that lost its lease and comes back is a new epoch. */
  epoch: number;
  /** `live`, `left` (stopped cleanly) or `lost` (its lease ran out and others took over). */
  state: string;
  joined_at: number;
  heartbeat_at: number;
  lease_until: number;
}

/** A named secret of a zone; the value is sealed (secrets.ts), never stored in clear. */
export interface SecretsTable {
  zone: string;
  name: string;
  /** `v1.<iv>.<tag>.<ciphertext>`, base64url. */
  value: string;
  created_at: number;
  updated_at: number;
}

export interface Database {
  zones: ZonesTable;
  sessions: SessionsTable;
  streams: StreamsTable;
  fds: FdsTable;
  events: EventsTable;
  log_head: LogHeadTable;
  operator_keys: OperatorKeysTable;
  settings: SettingsTable;
  agent_procs: AgentProcsTable;
  nodes: NodesTable;
  secrets: SecretsTable;
  plugins: PluginsTable;
  personas: PersonasTable;
  ui_sessions: UiSessionsTable;
}

/** A named agent configuration of a zone (personas.ts); spawns start from it by name. */
export interface PersonasTable {
  zone: string;
  name: string;
  runtime: string;
  model: string | null;
  system_prompt: string | null;
  /** JSON: tools, grants, maxTurns, budget, env, secretEnv (names), cwd, config. */
  settings: string;
  created_by: string;
  created_at: number;
  updated_at: number;
}

/** One optional plugin: whether this database runs it, and the version last loaded. */
export interface PluginsTable {
  name: string;
  enabled: number;
  version: string | null;
  updated_by: string;
  updated_at: number;
}

/** Keeps `Generated` imported for future auto-increment columns without a lint warning. */
export type _Reserved = Generated<number>;
