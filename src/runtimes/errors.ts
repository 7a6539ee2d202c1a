import type { z } from 'zod';
import { invalid, WarrenError } from '../vocab/errors.ts';

/**
 * The failures every runtime reports the same way: a missing executable, a bad `config`, and
 * the texts a crashed session carries. One module, so that `session show` reads alike whatever
 * the runtime.
 */

/** A spawn whose executable is missing: `runtime_unavailable`, naming what was looked for. */
export function runtimeUnavailable(
  runtime: string,
  missing: string,
  message: string,
  from?: string,
): WarrenError {
  return new WarrenError('runtime_unavailable', `${runtime}: ${message}`, {
    runtime,
    missing,
    ...(from ? { from } : {}),
  });
}

/** Parse a runtime's `config` once; a bad one is `invalid_input` naming the field and what it must be. */
export function parseConfig<T extends z.ZodType>(runtime: string, schema: T, config: unknown): z.output<T> {
  const r = schema.safeParse(config ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.length > 0 ? `config.${issue.path.map(String).join('.')}` : 'config';
  return failConfig(runtime, field, issue.message);
}

function failConfig(runtime: string, field: string, message: string): never {
  throw invalid(`${runtime}: ${field}: ${message}`, { runtime, field });
}

/** "exited with code 3" / "was killed by SIGKILL": how a process ended, as a clause. */
export function howExited(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `was killed by ${signal}`;
  return `exited with code ${code}`;
}

/** "claude exited with code 1: <detail>": a crash label that says what happened. */
export function exitedText(
  what: string,
  code: number | null,
  signal: NodeJS.Signals | null,
  detail?: string | null,
): string {
  return `${what} ${howExited(code, signal)}${detail ? `: ${detail}` : ''}`;
}
