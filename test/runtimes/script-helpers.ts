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

/**
 * What still runs out of a `wait.match` time bound under RE2 (linear, but the pattern's size
 * times the input): a thousand-position window over `length` pseudo-random a/b characters
 * (a fixed sequence, so runs are alike; periodic text would let RE2's DFA cache its states),
 * ending in `!` so nothing matches. Over a second of matching for 64 KiB.
 */
export function costlyMatch(length = 64 * 1024): { pattern: string; input: string } {
  let x = 0x2545f491;
  const chars: string[] = [];
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    chars.push(x & 1 ? 'a' : 'b');
  }
  return { pattern: '[ab]*a[ab]{1000}[ab]{1000}$', input: `${chars.join('')}!` };
}
