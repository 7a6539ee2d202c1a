import type { AgentContext } from './types.ts';

/**
 * The environment of every agent process. An agent is untrusted: it gets what it needs to run
 * and to reach warren, never the server's whole environment (which holds the operator's
 * secrets). In order, later entries winning:
 *
 *  1. `SERVER_ALLOWLIST`, from the server's environment: what programs need to run at all
 *     (find executables, a home for their config, text encoding, time zone, temp dir, who
 *     they run as, a shell for tools that start one, a terminal type). Nothing here is a secret.
 *  2. `inherit`: the few server variables a runtime's CLI needs to reach its model (its API
 *     key and endpoint), named by the runtime, never chosen by a spawn.
 *  3. `settings`: the runtime's own fixed settings (no telemetry, no auto-update, …).
 *  4. `spec.env`: what the spawn (or its persona) gave.
 *  5. warren's own variables, last so a spawn cannot forge them: WARREN_SESSION_ID,
 *     WARREN_TOKEN, WARREN_URL, WARREN_MCP_URL, TRACEPARENT (when tracing: the call that
 *     started the agent, so a CLI that reads it joins the trace), plus the runtime's `warren` extras.
 */
export const SERVER_ALLOWLIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
];

/** Locale categories (`LC_ALL`, `LC_CTYPE`, …): encoding, never secrets. */
const LOCALE = /^LC_[A-Z_]+$/;

export interface AgentEnvOptions {
  /** Server variables this runtime needs (e.g. its model API key), copied when set. */
  inherit?: readonly string[];
  /** The runtime's fixed settings; the spawn's env may override them. */
  settings?: Record<string, string>;
  /** More of warren's own variables (e.g. WARREN_PROMPT); a spawn cannot override them. */
  warren?: Record<string, string>;
  /** The server's environment (default `process.env`): tests pass their own. */
  server?: NodeJS.ProcessEnv;
}

type EnvContext = Pick<AgentContext, 'sessionId' | 'token' | 'url' | 'mcpUrl' | 'spec' | 'traceparent'>;

export function agentEnv(ctx: EnvContext, opts: AgentEnvOptions = {}): Record<string, string> {
  const server = opts.server ?? process.env;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(server)) {
    if (v !== undefined && (SERVER_ALLOWLIST.includes(k) || LOCALE.test(k))) env[k] = v;
  }
  for (const k of opts.inherit ?? []) {
    const v = server[k];
    if (v !== undefined) env[k] = v;
  }
  Object.assign(env, opts.settings, ctx.spec.env);
  const mcpUrl = ctx.mcpUrl ?? (ctx.url ? `${ctx.url}/mcp` : null);
  Object.assign(env, {
    WARREN_SESSION_ID: ctx.sessionId,
    WARREN_TOKEN: ctx.token,
    ...(ctx.url ? { WARREN_URL: ctx.url } : {}),
    ...(mcpUrl ? { WARREN_MCP_URL: mcpUrl } : {}),
    ...(ctx.traceparent ? { TRACEPARENT: ctx.traceparent } : {}),
    ...opts.warren,
  });
  return env;
}
