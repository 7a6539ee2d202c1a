import { WarrenError } from './errors.ts';
import { databaseUnavailable, isDatabaseUnreachable } from './unreachable.ts';

/** Where internal failures are recorded (the HTTP server's logger, or stderr). */
export interface ErrorLog {
  error(obj: Record<string, unknown>, msg: string): void;
}

export const stderrLog: ErrorLog = {
  error: (obj, msg) =>
    process.stderr.write(
      `${msg}: ${JSON.stringify({ ...obj, err: obj.err instanceof Error ? obj.err.stack : String(obj.err) })}\n`,
    ),
};

/** A failure as the client sees it: typed, with a request id; internals stay in the log. */
export function publicError(error: unknown, requestId: string, log: ErrorLog): WarrenError {
  if (error instanceof WarrenError && error.code !== 'internal') return error;
  if (isDatabaseUnreachable(error)) return databaseUnavailable();
  log.error({ err: error, reqId: requestId }, 'tool call failed');
  return new WarrenError('internal', `internal error (request ${requestId})`);
}
