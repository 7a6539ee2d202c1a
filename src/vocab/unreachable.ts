import { WarrenError } from './errors.ts';

/**
 * PostgreSQL error classes that mean "the server, not the statement": connection exceptions
 * (08), an administrator or a crash ending the backend (57P01-57P03), too many connections
 * (53300), a statement cut by warren's own deadlines (57014 query_canceled).
 */
const SERVER_GONE = /^(08|57P0[1-3]$|53300$|57014$)/;
/** Socket failures of the path to the database (Node's codes). */
const NET_GONE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** What node-postgres says when a connection dies or never comes (it sets no code). */
const CLIENT_GONE =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Query read timeout|connection timeout|database unreachable/i;

/**
 * Whether `error` says the database could not be reached (a lost or refused connection, a
 * deadline), as opposed to a statement it refused. Such a failure is retriable: callers get
 * `503 unavailable`, never `500 internal`.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const e = error as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (SERVER_GONE.test(e.code) || NET_GONE.has(e.code))) return true;
  if (typeof e.message === 'string' && CLIENT_GONE.test(e.message)) return true;
  // Node's AggregateError (a connect tried on every address of a name): any of them.
  return Array.isArray(e.errors) && e.errors.some(isDatabaseUnreachable);
}

/** Seconds a client is told to wait before retrying while the database is unreachable. */
export const DATABASE_RETRY_AFTER_S = 2;

/** The caller's view of such a failure: typed, retriable, with when to retry. */
export function databaseUnavailable(): WarrenError {
  return new WarrenError('unavailable', 'the database is unreachable; retry shortly', {
    retryAfterS: DATABASE_RETRY_AFTER_S,
  });
}
