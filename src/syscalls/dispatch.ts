import { z } from 'zod';
import type { InputLimits, Syscall, SyscallContext } from '../contract/syscall.ts';
import { forbidden, notFound, WarrenError } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';

export type SyscallTable = ReadonlyMap<string, Syscall>;

export const tableOf = (syscalls: readonly Syscall[]): SyscallTable => {
  const table = new Map<string, Syscall>();
  for (const s of syscalls) {
    if (table.has(s.name)) throw new Error(`syscall ${s.name} is defined twice`);
    table.set(s.name, s);
  }
  return table;
};

/** Whether a principal may call a syscall at all (its tool set); throws `forbidden` if not. */
export interface ToolGate {
  check(principal: Principal, syscall: Syscall): void;
  /** The gating policy's rules on validated input (the depth-tier policy's fd-1 rule). */
  guard?(principal: Principal, name: string, input: unknown): void;
}

/** What every call is checked against besides its schema. */
export interface DispatchPolicy {
  gate: ToolGate;
  limits: InputLimits;
  /** Syscalls of plugins this server does not load, and whose they are (for a helpful not_found). */
  absent?: ReadonlyMap<string, string>;
  /** The instance of a loaded plugin: a syscall's handler gets its own plugin's as `ctx.self`. */
  self?: (plugin: string) => unknown;
}

export const DEFAULT_LIMITS: InputLimits = { promptBytes: 256 * 1024, messageBytes: 256 * 1024 };

/** The free-text fields of any syscall's input, and which cap bounds them. */
const CAPPED_FIELDS: ReadonlyArray<readonly [string, keyof InputLimits]> = [
  ['prompt', 'promptBytes'],
  ['systemPrompt', 'promptBytes'],
  ['message', 'messageBytes'],
  ['text', 'messageBytes'],
];

/**
 * Prompts and messages are capped in bytes before validation: one oversized input makes
 * an agent's every turn slower and stalls the server for everyone.
 */
function checkSizes(name: string, input: unknown, limits: InputLimits): void {
  if (!input || typeof input !== 'object') return;
  for (const [field, cap] of CAPPED_FIELDS) {
    const value = (input as Record<string, unknown>)[field];
    if (typeof value !== 'string' || value.length * 3 <= limits[cap]) continue;
    const bytes = Buffer.byteLength(value);
    if (bytes > limits[cap]) {
      throw new WarrenError(
        'invalid_input',
        `${name}: ${field} is ${bytes} bytes, over the cap of ${limits[cap]}`,
        {
          field,
          bytes,
          maxBytes: limits[cap],
        },
      );
    }
  }
}

/** The error for a name the table lacks: a plain not_found, or one naming the plugin that is not loaded. */
export function missingSyscall(name: string, absent?: ReadonlyMap<string, string>): WarrenError {
  const plugin = absent?.get(name);
  if (plugin === undefined) return notFound('syscall', name.slice(0, 100));
  return new WarrenError(
    'not_found',
    `${name} belongs to the ${plugin} plugin, which this server does not load (warren plugin enable ${plugin}, then restart)`,
    { what: 'syscall', id: name, plugin },
  );
}

/** Deeper than any real input; the log's JSON.stringify overflows the stack a few thousand levels down. */
export const MAX_INPUT_DEPTH = 64;

/** Refuse input nested deeper than `max` (every transport, not only HTTP). */
function checkDepth(name: string, input: unknown, max = MAX_INPUT_DEPTH): void {
  if (deeperThan(input, 0, max))
    throw new WarrenError('invalid_input', `${name}: input nests deeper than ${max} levels`, {
      maxDepth: max,
    });
}

/**
 * Whether `value` nests `max` levels or more below `depth`. It recurses, but never past `max`
 * frames: however deep the input, the stack stays shallow. No allocation for the usual flat input.
 */
function deeperThan(value: unknown, depth: number, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth >= max) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (deeperThan(child, depth + 1, max)) return true;
    return false;
  }
  for (const key in value) {
    if (Object.hasOwn(value, key) && deeperThan((value as Record<string, unknown>)[key], depth + 1, max))
      return true;
  }
  return false;
}

/**
 * Look up, authorise, validate, run: the one path every surface takes into the kernel, and
 * the only place that checks callers, tool gating and each syscall's own `guard`.
 */
export async function dispatch(
  table: SyscallTable,
  policy: DispatchPolicy,
  caller: Omit<SyscallContext, 'self'>,
  name: string,
  rawInput: unknown,
): Promise<unknown> {
  const syscall = table.get(name);
  if (!syscall) throw missingSyscall(name, policy.absent);
  if (!syscall.callers.includes(caller.principal.kind)) {
    throw forbidden(
      `${name} cannot be called by ${caller.principal.kind === 'operator' ? 'an operator' : 'a session'}`,
    );
  }
  policy.gate.check(caller.principal, syscall);
  checkSizes(name, rawInput, policy.limits);
  checkDepth(name, rawInput);
  const parsed = syscall.input.safeParse(rawInput ?? {});
  if (!parsed.success) throw inputError(name, parsed.error);
  syscall.guard?.(caller.principal, parsed.data);
  policy.gate.guard?.(caller.principal, name, parsed.data);
  // The caller is gone (client closed, request cancelled): do not start work for nobody.
  if (caller.signal?.aborted) throw new WarrenError('unavailable', `${name}: the caller went away`);
  // One shape for every call's context (a spread of the caller's made as many as callers had optional fields).
  const ctx: SyscallContext = {
    principal: caller.principal,
    kernel: caller.kernel,
    self: syscall.plugin ? policy.self?.(syscall.plugin) : undefined,
    signal: caller.signal,
    progress: caller.progress,
  };
  const result = await syscall.handler(ctx, parsed.data);
  // The output schema is a promise to every client: a handler that breaks it is a kernel bug.
  const out = syscall.output.safeParse(result);
  if (!out.success) {
    throw new WarrenError(
      'internal',
      `${name} produced output that breaks its schema: ${z.prettifyError(out.error)}`,
    );
  }
  return out.data;
}

export function inputError(name: string, error: z.ZodError): WarrenError {
  return new WarrenError('invalid_input', `invalid input for ${name}: ${z.prettifyError(error)}`, {
    issues: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
  });
}
