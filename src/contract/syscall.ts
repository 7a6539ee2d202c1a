import type { z } from 'zod';
import type { Kernel } from '../kernel/kernel.ts';
import type { Principal } from '../vocab/principal.ts';
import type { Job } from './jobs.ts';

export type CallerKind = Principal['kind'];

export interface SyscallContext<Self = unknown> {
  principal: Principal;
  kernel: Kernel;
  /**
   * The instance of the plugin that defines the syscall (what its `start` returned): a
   * plugin's syscalls reach their own plugin here, and no other.
   */
  self: Self;
  /** Aborted when the caller goes away (HTTP client disconnects, MCP request cancelled). */
  signal?: AbortSignal;
  /** Long waits report progress here (MCP progress notifications, CLI spinner). */
  progress?: (message: string) => void;
}

/** Size caps on free text, in UTF-8 bytes (configurable per warren). */
export interface InputLimits {
  /** A spawn's prompt. */
  promptBytes: number;
  /** A message written to a stream or sent to a session. */
  messageBytes: number;
}

/** How REST exposes a syscall. Path params, query and body are merged into one input. */
export interface HttpBinding {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Fastify-style path, e.g. `/v1/sessions/:id/events`. */
  path: string;
  /** Request headers that become input fields: header name (lowercase) -> input field. */
  headers?: Record<string, string>;
}

/** How the CLI exposes a syscall. Other input fields become `--flags`. */
export interface CliBinding {
  /** e.g. `['streams', 'attach']`. */
  command: string[];
  /** Input fields taken from positional arguments, in order. */
  positional?: string[];
  /** Short aliases: flag name -> input field (e.g. `perm` -> `permission`). */
  flags?: Record<string, string>;
  examples?: string[];
  /**
   * Exit codes for scripts: the output field whose value picks the code (values not listed
   * exit 0), and the code when the server cannot be reached (default 1).
   */
  exit?: { field: string; codes: Record<string, number>; unreachable?: number };
}

/**
 * One operation, defined once. Every surface (REST, CLI, MCP) is generated from this:
 * a surface validates with `input`, checks `callers`, calls `handler`, and never adds logic.
 */
export interface Syscall<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  /** What the reference and `--help` list it under (`sessions`, `tasks`, …): usually its plugin's area. */
  group: string;
  /** The plugin that defines it (set when the table is assembled; `core` for the kernel's own). */
  plugin?: string;
  summary: string;
  description?: string;
  input: I;
  output: O;
  /** Who may call it at all; finer checks (fd ownership, attenuation) are the kernel's. */
  callers: readonly CallerKind[];
  /**
   * The jobs whose default tool set holds it (jobs.ts): `worker`, `orchestrator` (sessions,
   * when `callers` has `session`), `operator` (an operator's MCP list). Without one it is
   * reached by its `group`: named at spawn, per persona or task, or turned on by an operator.
   */
  jobs?: readonly Job[];
  /**
   * false: never in an MCP tool list (an alias kept for a surface of its own, e.g. a group
   * socket's seed names); it is still callable by its callers.
   */
  listed?: false;
  http?: HttpBinding;
  cli?: CliBinding;
  /**
   * A rule of this syscall on top of tool gating, run by `dispatch` on the validated input
   * before the handler (e.g. "a worker writes only to fd 1"); throws `forbidden`.
   */
  guard?(principal: Principal, input: z.output<I>): void;
  handler(ctx: SyscallContext, input: z.output<I>): Promise<z.input<O>>;
}

/** Keeps each definition's types while collecting them in one table. */
export const defineSyscall = <I extends z.ZodType, O extends z.ZodType>(s: Syscall<I, O>): Syscall<I, O> => s;
