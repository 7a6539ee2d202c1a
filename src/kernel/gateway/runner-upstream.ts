import { upstreamOf as anthropicUpstream } from '../../runtimes/claude-code/gateway.ts';
import { settingsOf } from '../../runtimes/codex/config.ts';
import { upstreamOf as openaiUpstream } from '../../runtimes/codex/gateway.ts';
import type { AgentSpec } from '../../runtimes/types.ts';
import type { Provider, Upstream } from './upstreams.ts';

/**
 * What the server holds for an agent on a remote runner (docs/gateway.md): the upstream its
 * spawn gave (`env`, its resolved `secretEnv`, and for codex its config), found by the same
 * functions the runtime uses on the runner. Never what the runner says: a runner must not be
 * able to make the server send a key, or a request, anywhere else. A runtime not in this table,
 * or a spawn that gives no key (the runner's host has its own, or a login), gets no gateway.
 */
const BY_RUNTIME: Record<string, (spec: AgentSpec) => { provider: Provider; upstream: Upstream } | null> = {
  'claude-code': (spec) => {
    const upstream = anthropicUpstream(spec.env);
    return upstream ? { provider: 'anthropic', upstream } : null;
  },
  codex: (spec) => {
    const upstream = openaiUpstream(spec.env, settingsOf(spec.config));
    return upstream ? { provider: 'openai', upstream } : null;
  },
};

export function runnerUpstream(
  runtime: string,
  spec: AgentSpec,
): { provider: Provider; upstream: Upstream } | null {
  const of = Object.hasOwn(BY_RUNTIME, runtime) ? BY_RUNTIME[runtime] : undefined;
  if (!of) return null;
  try {
    return of(spec);
  } catch {
    // A config the runtime refuses: the runner refuses it too, with its own message.
    return null;
  }
}
