import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Kysely, Migration } from 'kysely';
import type { Registry } from 'prom-client';
import type { z } from 'zod';
import type { Kernel } from '../kernel/kernel.ts';
import type { DialectKind } from '../store/dialect.ts';
import type { LogEvent } from '../store/events.ts';
import type { DeliveryMode, Permission } from '../store/schema.ts';
import type { WriteUnit } from '../store/writer.ts';
import type { Log } from '../util/log.ts';
import type { Principal } from '../vocab/principal.ts';
import type { PromptSource, ResourceProvider } from './resources.ts';
import type { Syscall, SyscallContext } from './syscall.ts';

/**
 * A plugin is a kernel module: policy on top of the mechanism. It declares what it adds
 * (syscalls, tables, reconcile phases, event subscribers) and the host brings it up in
 * dependency order. See docs/plugins.md.
 */
export interface Plugin<C = unknown, DB = unknown> {
  /** Lowercase, unique: `orchestration`, `scheduling`, … */
  name: string;
  version: string;
  summary: string;
  /** Plugins that must be loaded first (and are then required to be enabled). */
  dependsOn?: readonly string[];
  /** Always loaded, never disabled (only `core`). */
  required?: boolean;
  /**
   * Its syscalls are for callers with a bearer JWT of an external issuer too (the
   * coordinator's API); such a caller reaches no other plugin's.
   */
  jwtCallers?: boolean;
  /**
   * Its own tables, as Kysely migrations in name order. Each plugin keeps its own migration
   * history (`plugin_migrations_<name>`), so a plugin enabled late never reorders another's.
   */
  migrations?: (kind: DialectKind) => Record<string, Migration>;
  /** Its operations: they join the one syscall table (MCP tools, REST, CLI, reference). */
  syscalls?: readonly Syscall[];
  /** The names it completes for MCP clients (`completion/complete`), gated like its syscalls. */
  completions?: readonly Completion[];
  /** Resources MCP clients read and watch, each gated like the syscall it rides on. */
  resources?: ResourceProvider;
  /** Prompt templates, each offered only to callers that may call what it tells them to use. */
  prompts?: readonly PromptSource[];
  /**
   * What ids of its own stand for sessions, as a person reads it (`a task id`): named in
   * errors when such an id is needed (`streams attach --durable`) and this plugin is not loaded.
   */
  sessionTargets?: string;
  /** Its settings (the config file's `plugins.<name>` object), checked at start-up. */
  config?: z.ZodType<C>;
  /** Bring it up once the kernel is running; what it returns is how the host and syscalls reach it. */
  start?(ctx: PluginContext<C, DB>): Promise<PluginInstance> | PluginInstance;
}

/**
 * A write unit as a plugin sees it: its own tables (`db`), the log to append to, and the
 * unit to hand to the kernel's `…In` calls so its changes commit with the plugin's. At run
 * time it is the writer's unit itself; the type only narrows which tables it names.
 */
export interface PluginTx<DB> extends WriteUnit {
  readonly db: Kysely<DB>;
}

/**
 * A plugin's handle on the store: its own tables, read and written, never the kernel's or
 * another plugin's. Tables a plugin creates are named for it (`<plugin>` or `<plugin>_…`).
 */
export interface PluginTables<DB> {
  readonly kind: DialectKind;
  /** Reads of committed rows (a reader connection; inside a write use `tx.db`). */
  readonly reader: Kysely<DB>;
  /**
   * Reads that may take long (a search over callers' words): run off the event loop (SQLite: a
   * worker thread with its own connection, a read stopped past 10 s; PostgreSQL: `reader`).
   * Only reads: a statement that writes is refused.
   */
  readonly heavyReader: Kysely<DB>;
  /** One unit of the group commit: its table changes and log events commit together. */
  write<R>(fn: (tx: PluginTx<DB>) => Promise<R>, opts?: { readsFirst?: boolean }): Promise<R>;
}

/** What a plugin is given: the kernel's public API, its own tables, its config, the syscall table. */
export interface PluginContext<C = unknown, DB = unknown> {
  kernel: Kernel;
  tables: PluginTables<DB>;
  config: C;
  /** Call any loaded syscall as `principal`, through the one dispatch path (gating included). */
  call(principal: Principal, name: string, input: unknown): Promise<unknown>;
  /** The instance of a plugin this one depends on. */
  plugin<T = PluginInstance>(name: string): T;
  /**
   * This warren's Prometheus registry (`GET /metrics`), to register the plugin's own metrics
   * on (`new Gauge({ name: 'warren_outbox_backlog', …, registers: [metrics] })`, prom-client);
   * null when metrics are off. Names start with `warren_<plugin>_`.
   */
  metrics: Registry | null;
  /** Where the plugin's diagnostics go (the server's logger). */
  log: Log;
  /** The server's data directory (for files and sockets of its own), or null when it has none. */
  dataDir: string | null;
  /**
   * What the loaded plugins contribute to the start of a task's session (each instance's
   * `startContext`), in load order; a contributor that fails is logged and left out. The
   * plugin that spawns task sessions (orchestration) calls it before each spawn.
   */
  startContext(task: StartContextTask): Promise<StartContextPart[]>;
  /** The plugins of this warren, as the core plugin's syscalls show and manage them. */
  directory: PluginDirectory;
}

/** What an id a plugin gives meaning to stands for (PluginDirectory.target). */
export interface Target {
  plugin: string;
  /** Its live session now, or null. */
  session: string | null;
  durable?: DurableAttachments;
}

/** One known plugin, as `warren plugin list` shows it. */
export interface PluginListing {
  name: string;
  version: string;
  summary: string;
  required: boolean;
  enabled: boolean;
  loaded: boolean;
  dependsOn: string[];
  /** The version it last ran with here (null: never loaded). */
  loadedVersion: string | null;
}

/**
 * The plugins of one warren, seen from below the host that loads them (src/syscalls/host.ts
 * implements it): which are loaded, what ids they give meaning to, and their enablement.
 */
export interface PluginDirectory {
  /** The loaded plugins' names, in load order. */
  readonly loadedNames: readonly string[];
  /**
   * The plugin that gives `id` meaning, the session it stands for now (null: none live)
   * and its durable attachments, if it keeps any; undefined when no plugin claims `id`.
   */
  target(zone: string, id: string): Promise<Target | undefined>;
  /** Why `id` cannot keep a durable attachment, for the error. */
  notDurable(id: string): string;
  /** Every known plugin: whether the database enables it and whether this server loaded it. */
  list(): Promise<PluginListing[]>;
  /** Enable or disable an optional plugin, persisted; it takes effect at the next start. */
  toggle(
    name: string,
    enabled: boolean,
    by: string,
    opts?: { withDependents?: boolean },
  ): Promise<PluginListing & { restartRequired: boolean; message: string; alsoDisabled: string[] }>;
}

/** The task whose session is about to start, as a start-context contributor sees it. */
export interface StartContextTask {
  zone: string;
  id: string;
  title: string;
  prompt: string;
  /** Its session's attempt number (1 for the first). */
  attempt: number;
}

/** One plugin's contribution to a session's start context. */
export interface StartContextPart {
  /** The text put ahead of the first prompt (the contributor keeps it within its own budget). */
  text: string;
  /** What the log records instead of the text: ids and versions of what was included. */
  ref: Record<string, unknown>;
}

/** A reconcile phase: repairs what the event path missed; must cost what changed. */
export interface ReconcilePhase {
  name: string;
  run(): Promise<void>;
  /**
   * The name seed 001 gives the reconciliation phase this one is (or is part of), where warren
   * names it otherwise or splits it: `warren status` and docs/architecture.md show both.
   */
  seed?: string;
  /**
   * With several nodes on one database (docs/scaling.md): `cluster` runs the phase on one
   * node at a time (a PostgreSQL try-lock; the others skip that tick) — for work that must
   * happen once (deadlines, retention, dispatch, schedules); `node` (the default) on every
   * node — for what concerns that node's own agents or memory. Alone, both simply run.
   */
  scope?: 'cluster' | 'node';
}

/**
 * Ids a plugin gives meaning to that stand for a session: a task id names its task's
 * latest live session. Room commands (`streams attach|detach|attachments`) accept them.
 */
export interface SessionTargets {
  /**
   * The session `id` stands for now: a session id, `null` when the id is this plugin's but
   * has no live session, `undefined` when the id is not this plugin's.
   */
  resolve(zone: string, id: string): Promise<string | null | undefined>;
  /** Present when this plugin's ids keep room attachments across their sessions (`--durable`). */
  durable?: DurableAttachments;
}

/**
 * Room attachments kept for an id rather than a session: the plugin stores them and
 * re-applies them to each new session the id comes to stand for (and after restarts).
 * Applying one to the id's session of the moment is the caller's (src/plugins/room-targets.ts).
 */
export interface DurableAttachments {
  /** Keep (or update) an attachment of `id` to `stream`; `by` is an operator of `id`'s zone. */
  attach(
    by: Principal,
    id: string,
    stream: { id: string; name: string },
    permission: Permission,
    mode: DeliveryMode,
  ): Promise<void>;
  /** Forget it; true when there was one. */
  detach(by: Principal, id: string, streamId: string): Promise<boolean>;
  /** The attachments kept for `id`, oldest first (bounded by the rooms of a zone). */
  list(zone: string, id: string): Promise<DurableAttachment[]>;
}

export interface DurableAttachment {
  streamId: string;
  streamName: string;
  permission: Permission;
  mode: DeliveryMode;
  createdBy: string;
  createdAt: number;
}

/**
 * One kind of name a plugin completes (`sessions`, `tasks`, …): the values a caller may see
 * that start with what it typed. It rides on a syscall's right: a caller that may not call
 * `via` gets no values, so completion is no side door past a caller's tool set.
 */
export interface Completion {
  kind: string;
  via: string;
  /** At most `limit` values starting with `prefix`, among those `ctx.principal` may see. */
  values(ctx: SyscallContext, prefix: string, limit: number): Promise<string[]>;
}

/** A started plugin. Every member is optional; plugins add their own on top. */
export interface PluginInstance {
  /** Appended to the reconcile loop after the kernel's own phases, in load order. */
  phases?: readonly ReconcilePhase[];
  /**
   * Each batch of committed events, in commit order. Runs on the writer's commit path:
   * it must not throw or block; queue work and do it asynchronously.
   */
  onCommit?(events: readonly LogEvent[]): void;
  /**
   * Each batch committed by any node sharing the database, this one's included, in seq order:
   * for caches of what the log says (another node's change must drop them too), never for
   * reactions that write, which the committing node makes. Same rules as `onCommit`.
   */
  onAnyCommit?(events: readonly LogEvent[]): void;
  targets?: SessionTargets;
  /**
   * Context for a task's session before it starts (prompt prefix): null when it has nothing.
   * Called by the spawning plugin through `PluginContext.startContext`.
   */
  startContext?(task: StartContextTask): Promise<StartContextPart | null>;
  /** HTTP upgrades on the server's port it serves (a runner's WebSocket). */
  upgrades?: Upgrades;
  stop?(): Promise<void>;
}

/** A plugin's WebSocket endpoint on the server's port. */
export interface Upgrades {
  /** True when the plugin took the socket (it authenticates it itself), false to leave it. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** The HTTP server is closing: end the upgraded connections (they would hold it open). */
  close(): void;
}

/** Keeps a plugin's config type while collecting plugins in one list. */
export const definePlugin = <C, DB = unknown>(p: Plugin<C, DB>): Plugin<C, DB> => p;
