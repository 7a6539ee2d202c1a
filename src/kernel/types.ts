import type { DeliveryMode, ParentClose } from '../store/schema.ts';

/** What a spawn asks for. Every spawn path (CLI, ipc_spawn, plugins) builds one of these. */
export interface SpawnRequest {
  runtime: string;
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
  grants?: { allow?: string[]; deny?: string[] };
  /** Who may wake it by writing to it while it is suspended (default: operators). */
  wakeOnInput?: 'operator' | 'any' | 'never';
}

/** The policy that gives a new session its tools (injected: the kernel knows no syscall table). */
export type ToolPolicy = (
  depth: number,
  parentTools: readonly string[] | null,
  allowlist?: readonly string[],
  grants?: SpawnRequest['grants'],
) => string[] | null;
