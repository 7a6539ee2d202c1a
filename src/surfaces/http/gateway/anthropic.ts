import { bearerOf } from '../../../auth/authenticate.ts';
import type { GatewayDialect } from './dialect.ts';
import { ANTHROPIC_USAGE } from './usage.ts';

/** The API's error types by status, for the errors the gateway gives itself. */
const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  503: 'api_error',
};

/**
 * The Anthropic Messages API at `/v1/gateway/anthropic` (docs/gateway.md): what Claude Code
 * calls, for agents whose `ANTHROPIC_BASE_URL` warren set (a base URL without `/v1`).
 */
export const ANTHROPIC: GatewayDialect = {
  provider: 'anthropic',
  prefix: '/v1/gateway/anthropic',
  mount: '/v1/gateway/anthropic',
  routes: [
    { method: 'POST', path: '/v1/messages', metered: true },
    { method: 'POST', path: '/v1/messages/count_tokens', metered: false },
    { method: 'GET', path: '/v1/models', metered: false },
    { method: 'GET', path: '/v1/models/:id', metered: false },
  ],
  // `x-api-key`, or a bearer (ANTHROPIC_AUTH_TOKEN).
  credential: (h) => (typeof h['x-api-key'] === 'string' ? h['x-api-key'] : bearerOf(h.authorization)),
  error: (status, message) =>
    JSON.stringify({ type: 'error', error: { type: ERROR_TYPE[status] ?? 'api_error', message } }),
  usage: ANTHROPIC_USAGE,
};
