import type { AgentContext, AgentExit, AgentHandle } from '../../src/runtimes/types.ts';
import { systemClock } from '../../src/util/clock.ts';

/** A script agent's context without a kernel: what it reports is recorded, syscalls refused. */
export function fakeContext(config: Record<string, unknown>) {
  const outputs: string[] = [];
  const events: Array<{ type: string; payload: Record<string, unknown> }> = [];
  let exit: AgentExit | undefined;
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
    sink: {
      output: async (text) => void outputs.push(text),
      event: async (type, payload) => void events.push({ type, payload }),
      usage: async () => {},
      busy: async () => {},
      idle: async () => {},
      saveState: async () => {},
      exit: (e) => {
        exit = e;
      },
    },
    call: async (name) => {
      throw new Error(`no kernel here: ${name}`);
    },
    clock: systemClock,
  };
  return { ctx, outputs, events, exited: () => exit };
}

/** Resolve once the agent waits for input (or reject after `ms`). */
export async function whenReady(agent: AgentHandle, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!agent.ready) {
    if (Date.now() > until) throw new Error('the agent never waited for input');
    await new Promise((r) => setTimeout(r, 5));
  }
}
