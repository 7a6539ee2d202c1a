/**
 * A `command` agent that reports turns (`{"warren":"idle"}` / `busy`) has its input counted
 * as taken at the idle that ends each turn, one batch per turn, rather than once written to
 * its stdin (issue 26: an echo agent ended by a fence mid-turn lost the message it was
 * handed). One that never reports turns keeps the old rule.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { it } from 'node:test';
import { CommandAgent } from '../../src/runtimes/command/agent.ts';
import type { AgentContext } from '../../src/runtimes/types.ts';

const input = { messages: [], text: 'hi' };

/** A CommandAgent over `node -e script`; resolves once `lines` control lines were reported. */
function agent(script: string) {
  const reports: string[] = [];
  const sink = new Proxy({}, { get: (_t, name) => () => void reports.push(String(name)) });
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  const a = new CommandAgent({ sink } as unknown as AgentContext, child, 'node');
  const until = async (n: number) => {
    for (let i = 0; i < 200 && reports.length < n; i++) await new Promise((r) => setTimeout(r, 25));
  };
  return { a, reports, until };
}

it('one that reports turns: not ready mid-turn, its input acknowledged at the idle', async () => {
  const { a, reports, until } = agent(
    `const say = (o) => console.log(JSON.stringify(o)); say({ warren: 'idle' });
     process.stdin.on('data', () => { say({ warren: 'busy' }); setTimeout(() => say({ warren: 'idle' }), 100); });`,
  );
  try {
    assert.equal(a.acksOnDeliver, true, 'before it says anything, the old rule');
    await until(1);
    assert.deepEqual(reports, ['idle']);
    assert.equal(a.acksOnDeliver, false, 'it reports turns: acknowledged at their end');
    assert.equal(a.ready, true);
    a.deliver(input);
    assert.equal(a.ready, false, 'mid-turn: the next batch waits for the idle');
    await until(3);
    assert.deepEqual(reports, ['idle', 'busy', 'idle']);
    assert.equal(a.ready, true);
  } finally {
    await a.stop();
  }
});

it('one that never reports turns: input counts as taken once written, it is always ready', async () => {
  const { a } = agent(`process.stdin.resume(); setTimeout(() => {}, 60_000);`);
  try {
    a.deliver(input);
    assert.equal(a.acksOnDeliver, true);
    assert.equal(a.ready, true);
  } finally {
    await a.stop();
  }
});
