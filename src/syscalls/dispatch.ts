import { z } from 'zod';
import { forbidden, notFound, WarrenError } from '../kernel/errors.ts';
import type { Principal } from '../kernel/principal.ts';
import type { Syscall, SyscallContext } from './types.ts';

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
}

/**
 * Look up, authorise, validate, run: the one path every surface takes into the kernel, and
 * the only place that checks callers, tool gating and each syscall's own `guard`.
 */
export async function dispatch(
  table: SyscallTable,
  gate: ToolGate,
  ctx: SyscallContext,
  name: string,
  rawInput: unknown,
): Promise<unknown> {
  const syscall = table.get(name);
  if (!syscall) throw notFound('syscall', name);
  if (!syscall.callers.includes(ctx.principal.kind)) {
    throw forbidden(
      `${name} cannot be called by ${ctx.principal.kind === 'operator' ? 'an operator' : 'a session'}`,
    );
  }
  gate.check(ctx.principal, syscall);
  const parsed = syscall.input.safeParse(rawInput ?? {});
  if (!parsed.success) throw inputError(name, parsed.error);
  syscall.guard?.(ctx.principal, parsed.data);
  ctx.signal?.throwIfAborted();
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
