import type { AgentContext, AgentHandle } from '../../src/runtimes/types.ts';
import { systemClock } from '../../src/util/clock.ts';
import { recorder } from './harness.ts';

/** A script agent's context without a kernel: what it reports is recorded, syscalls refused. */
export function fakeContext(config: Record<string, unknown>) {
  const rec = recorder();
  const ctx: AgentContext = {
    sessionId: 'ses_test',
    zone: 'default',
    depth: 1,
    title: null,
    spec: { prompt: null, config, cwd: null, model: null, env: {} },
    token: 'token',
    url: null,
    mcpUrl: null,
    tools: [],
    resumeState: null,
    sink: rec.sink,
    call: async (name) => {
      throw new Error(`no kernel here: ${name}`);
    },
    clock: systemClock,
  };
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
