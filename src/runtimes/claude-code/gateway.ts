import type { AgentGateway } from '../types.ts';
import { modelApiBase } from './reach.ts';

/**
 * Claude Code behind warren's model gateway (docs/gateway.md): the key and endpoint the agent
 * would have used (its spawn's `secretEnv` or `env`, else the server's) become its session's
 * upstream, held by the server; the CLI gets the gateway's URL and its session credential
 * instead, so no provider key is in its environment, argv or files.
 *
 * Only an API key (`ANTHROPIC_API_KEY`, sent as `x-api-key`) or token (`ANTHROPIC_AUTH_TOKEN`,
 * sent as a bearer) is taken over. An agent with neither (a subscription login through
 * `CLAUDE_CODE_OAUTH_TOKEN` or its config dir) reaches Anthropic as before.
 */

/** What the CLI would use for its model calls, and how it would send the key. */
export function upstreamOf(
  env: Readonly<Record<string, string>>,
): { baseUrl: string; key: string; auth: 'x-api-key' | 'bearer' } | null {
  const baseUrl = modelApiBase(env);
  if (env.ANTHROPIC_API_KEY) return { baseUrl, key: env.ANTHROPIC_API_KEY, auth: 'x-api-key' };
  if (env.ANTHROPIC_AUTH_TOKEN) return { baseUrl, key: env.ANTHROPIC_AUTH_TOKEN, auth: 'bearer' };
  return null;
}

/**
 * The agent's environment with its model calls sent through the gateway, the endpoint they
 * really go to (for reach.ts's probe when a call gets no answer), and whether the gateway
 * meters them. Unchanged without a gateway or a key to hold.
 */
export function throughGateway(
  env: Record<string, string>,
  gateway: AgentGateway | null | undefined,
): { env: Record<string, string>; apiBase: string; metered: boolean } {
  const upstream = gateway ? upstreamOf(env) : null;
  if (!gateway || !upstream) return { env, apiBase: modelApiBase(env), metered: false };
  gateway.hold('anthropic', upstream);
  const {
    ANTHROPIC_API_KEY: _key,
    ANTHROPIC_AUTH_TOKEN: _token,
    CLAUDE_CODE_OAUTH_TOKEN: _oauth,
    ...rest
  } = env;
  return {
    env: { ...rest, ANTHROPIC_BASE_URL: gateway.url('anthropic'), ANTHROPIC_API_KEY: gateway.credential },
    apiBase: upstream.baseUrl,
    metered: true,
  };
}
