/** Every failure a caller can see has a stable code, a human message and the HTTP status that fits. */
export const ERROR_STATUS = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  /** A persona (or a request) that would give a child more than its spawner holds. */
  widens_grant: 403,
  not_found: 404,
  conflict: 409,
  reserved_name: 409,
  name_taken: 409,
  undelivered_messages: 409,
  limit_exceeded: 429,
  session_stopped: 409,
  dependency_cycle: 409,
  has_children: 409,
  already_answered: 409,
  /** A session's turn is still running: queue the prompt or force it (the turns plugin). */
  active_turn_exists: 409,
  runtime_unavailable: 422,
  over_budget: 422,
  /** A repeat of an idempotent request (same Idempotency-Key) with a different body. */
  idempotency_mismatch: 422,
  runtime_failed: 502,
  unavailable: 503,
  peer_gone: 410,
  /** The fd was closed (by its holder, or when the session behind it was killed). */
  fd_closed: 410,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class WarrenError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'WarrenError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
  }

  toJSON() {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export const notFound = (what: string, id: string | number) =>
  new WarrenError('not_found', `${what} ${JSON.stringify(id)} does not exist`, { what, id });

export const forbidden = (message: string) => new WarrenError('forbidden', message);

export const invalid = (message: string, details?: Record<string, unknown>) =>
  new WarrenError('invalid_input', message, details);
