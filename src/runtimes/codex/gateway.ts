import type { AgentGateway } from '../types.ts';
import type { CodexSettings } from './args.ts';

/**
 * Codex behind warren's model gateway (docs/gateway.md): the key and endpoint the CLI would
 * have used become its session's upstream, held by the server; the CLI gets the gateway's
 * Responses API as its provider (`baseUrl`) and its session credential as the provider's key
 * (`apiKeyEnv`), so no provider key is in its environment, argv or files.
 *
 * What it would have used: with a `baseUrl` setting, that URL and the key in the variable
 * `apiKeyEnv` names; without, OpenAI's API (or `OPENAI_BASE_URL`) with `CODEX_API_KEY`, else
 * `OPENAI_API_KEY`. An agent with no key to hold (a `codexHome` with a login, a keyless
 * local provider) reaches its provider as before.
 */

export const OPENAI_API = 'https://api.openai.com/v1';

/** The variables that carry a key or endpoint codex would use (dropped behind the gateway). */
const MODEL_ENV = ['OPENAI_API_KEY', 'CODEX_API_KEY', 'OPENAI_BASE_URL'];

export function upstreamOf(
  env: Readonly<Record<string, string>>,
  settings: CodexSettings,
): { baseUrl: string; key: string; auth: 'bearer' } | null {
  if (settings.baseUrl) {
    const key = settings.apiKeyEnv ? env[settings.apiKeyEnv] : undefined;
    return key ? { baseUrl: settings.baseUrl, key, auth: 'bearer' } : null;
  }
  const key = env.CODEX_API_KEY || env.OPENAI_API_KEY;
  return key ? { baseUrl: env.OPENAI_BASE_URL || OPENAI_API, key, auth: 'bearer' } : null;
}

/**
 * The agent's environment and settings with its model calls sent through the gateway, and
 * whether the gateway meters them. `tokenEnv`: the variable that already holds the session's
 * token (the gateway's credential), named as the provider's key. Unchanged without a gateway
 * or a key to hold.
 */
export function throughGateway(
  env: Record<string, string>,
  settings: CodexSettings,
  gateway: AgentGateway | null | undefined,
  tokenEnv: string,
): { env: Record<string, string>; settings: CodexSettings; metered: boolean } {
  const upstream = gateway ? upstreamOf(env, settings) : null;
  if (!gateway || !upstream) return { env, settings, metered: false };
  gateway.hold('openai', upstream);
  const drop = new Set([...MODEL_ENV, ...(settings.apiKeyEnv ? [settings.apiKeyEnv] : [])]);
  const kept = Object.fromEntries(Object.entries(env).filter(([k]) => !drop.has(k)));
  // The provider's other keys (headers, query params, retries) stay; none may point it elsewhere.
  const { base_url: _u, env_key: _k, wire_api: _w, ...provider } = settings.provider ?? {};
  return {
    env: { ...kept, [tokenEnv]: gateway.credential },
    settings: {
      ...settings,
      baseUrl: `${gateway.url('openai')}/v1`,
      apiKeyEnv: tokenEnv,
      ...(settings.provider ? { provider } : {}),
    },
    metered: true,
  };
}
