import type { AgentHandle } from '../../src/runtimes/types.ts';
import { aloneContext } from './harness.ts';

/** A script agent's context without a kernel: what it reports is recorded, syscalls refused. */
export function fakeContext(config: Record<string, unknown>) {
  const { ctx, rec } = aloneContext({
    spec: { prompt: null, config, cwd: null, model: null, env: {} },
    call: async (name) => {
      throw new Error(`no kernel here: ${name}`);
    },
  });
  return {
    ctx,
    outputs: () => rec.of('output').map((r) => r.text),
    events: () => rec.of('event'),
    exited: () => rec.of('exit')[0]?.result,
  };
}

/** Resolve once the agent waits for input (or reject after `ms`). */
export async function whenReady(agent: AgentHandle, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!agent.ready) {
    if (Date.now() > until) throw new Error('the agent never waited for input');
    await new Promise((r) => setTimeout(r, 5));
  }
}
