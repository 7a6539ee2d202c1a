import type { DeliveryMode, ParentClose } from '../store/schema.ts';

/** What a spawn asks for. Every spawn path (CLI, ipc_spawn, plugins) builds one of these. */
export interface SpawnRequest {
  /** How the agent runs; absent: its persona's runtime, else `script`. */
  runtime?: string;
  runner?: string;
  title?: string;
  prompt?: string;
  /** Runtime-specific configuration (a script, a command line, a model …). */
  config?: Record<string, unknown>;
  cwd?: string;
  model?: string;
  env?: Record<string, string>;
  pipe?: DeliveryMode;
  parentClose?: ParentClose;
  ttlSeconds?: number;
  maxTurns?: number;
  idempotencyKey?: string;
  /** Allowlist: the child may call at most these tools. */
  tools?: string[];
  /**
   * What the child is there for (`worker`: it runs a task; default `orchestrator`): its job's
   * default tool set is where its set starts (the gate's; the kernel only passes it on).
   */
  job?: string;
  /** Tool groups added to its job's default set (never past what its spawner holds). */
  toolGroups?: string[];
  /**
   * Tool rules (`allow` / `deny`) and spawn grants: the runtimes, executables, working
   * directories and secret names the child may use in turn (see grants.ts).
   */
  grants?: {
    allow?: string[];
    deny?: string[];
    runtimes?: string[];
    executables?: string[];
    cwd?: string[];
    secrets?: string[];
    /** The child's network when confined (`none`: warren's endpoint only); never more than the spawner's. */
    network?: 'full' | 'none';
  };
  /** Environment variables filled from named secrets at agent start: `{ VAR: secretName }`. */
  secretEnv?: Record<string, string>;
  /** A stored persona (runtime, model, prompt, tools, grants, budget …) to start from; it only narrows. */
  personaId?: string;
  /** Limits for the whole subtree under the new session (capped by what its parent has left). */
  budget?: Budget;
  /** Who may wake it by writing to it while it is suspended (default: operators). */
  wakeOnInput?: 'operator' | 'any' | 'never';
  /**
   * Context put ahead of the first prompt (a plugin's start context: docs/plugins.md). Not a
   * syscall input: only plugins set it. The runtime gets `text` before `prompt`; the log's
   * `session.spawned` gets `digest` (a reference and a hash), never the text.
   */
  context?: { text: string; digest: Record<string, unknown> };
  /**
   * A plugin that tells the parent about this session instead of the kernel's SIGCHLD (its
   * name): orchestration reports a task's session as `[TASK]`. Not a syscall input.
   */
  reportedBy?: string;
}

/** A request with its persona applied (personas.ts): what the one spawn path really runs. */
export interface ResolvedSpawnRequest extends SpawnRequest {
  runtime: string;
  /** The persona's system prompt, handed to the runtime (spec.systemPrompt). */
  systemPrompt?: string;
  /** The persona's tool allowlist and rules, applied before the request's (both only narrow). */
  personaTools?: { allowlist?: string[] | undefined; grants?: SpawnRequest['grants'] | undefined };
  /** The persona's cwd roots: the session's own working directory must lie in one of them. */
  cwdRoots?: string[];
}

/** What a subtree may spend. Every limit is optional; an absent one is unlimited. */
export interface Budget {
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  turns?: number;
  /** Wall time from the budgeted session's spawn. */
  wallMs?: number;
}

/** The policy that gives a new session its tools (injected: the kernel knows no syscall table). */
export type ToolPolicy = (
  /** The new session's depth, its job and the tool groups asked for (a persona's and the request's). */
  spec: { depth: number; job?: string | undefined; groups?: readonly string[] | undefined },
  parentTools: readonly string[] | null,
  allowlist?: readonly string[],
  grants?: SpawnRequest['grants'],
) => string[] | null;
