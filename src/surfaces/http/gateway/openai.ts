import { bearerOf } from '../../../auth/authenticate.ts';
import type { GatewayDialect } from './dialect.ts';
import { OPENAI_USAGE } from './usage.ts';

const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  404: 'invalid_request_error',
  413: 'invalid_request_error',
};
const ERROR_CODE: Record<number, string> = { 401: 'invalid_api_key', 404: 'unknown_url' };

/**
 * The OpenAI Responses API at `/v1/gateway/openai` (docs/gateway.md): what Codex calls, for
 * agents whose provider base URL warren set to `/v1/gateway/openai/v1`. An OpenAI base URL
 * carries its `/v1` (`https://api.openai.com/v1`), so the gateway's `/v1` goes before it.
 */
export const OPENAI: GatewayDialect = {
  provider: 'openai',
  prefix: '/v1/gateway/openai',
  mount: '/v1/gateway/openai/v1',
  routes: [
    { method: 'POST', path: '/v1/responses', metered: true },
    { method: 'GET', path: '/v1/models', metered: false },
    { method: 'GET', path: '/v1/models/:id', metered: false },
  ],
  credential: (h) => bearerOf(h.authorization),
  error: (status, message) =>
    JSON.stringify({
      error: {
        message,
        type: ERROR_TYPE[status] ?? 'server_error',
        param: null,
        code: ERROR_CODE[status] ?? null,
      },
    }),
  usage: OPENAI_USAGE,
};
