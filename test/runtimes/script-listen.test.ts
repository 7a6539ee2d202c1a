/**
 * A listening script's answer is the one record that it heard an input: the kernel does not
 * acknowledge the input of a turn whose answer was refused, but it does not hand it to the
 * same agent again either (test/kernel/turn-loss.test.ts). The fault suite lost a send this
 * way: the answer was refused while PostgreSQL restarted, and the script failed for it. So a
 * refused answer is written again until it is recorded, and the script listens on.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ScriptRuntime } from '../../src/runtimes/script/runtime.ts';
import type { AgentHandle } from '../../src/runtimes/types.ts';
import type { TimerHandle } from '../../src/util/clock.ts';
import { until } from '../helpers/warrens.ts';
import { fakeContext, whenReady } from './script-helpers.ts';

const LISTENER = { script: { steps: [{ listen: { say: 'heard ${input.text}' } }] } };

const send = (agent: AgentHandle, seq: number, text: string) =>
  agent.deliver({
    messages: [{ seq, fd: 0, stream: 'stdin', from: 'operator:admin', text, kind: 'message' }],
    text,
  });

it('an answer refused while the database is unreachable is written again; the script listens on', async () => {
  const { ctx, outputs, exited } = fakeContext(LISTENER);
  // The first two tries of the first answer are refused, as a write is while PostgreSQL restarts.
  const record = ctx.sink.output;
  let refusals = 2;
  ctx.sink.output = (text) =>
    text === 'heard one' && refusals-- > 0 ? Promise.reject(new Error('database unreachable')) : record(text);
  const runtime = new ScriptRuntime();
  const agent = await runtime.start(ctx);
  try {
    await whenReady(agent);
    send(agent, 1, 'one');
    await whenReady(agent);
    send(agent, 2, 'two');
    await until(() => outputs().length === 2, 10_000, 'both answers');
    assert.deepEqual(
      outputs(),
      ['heard one', 'heard two'],
      'the refused answer recorded, before the next one',
    );
    assert.equal(refusals, -1, 'written three times: refused twice, then recorded');
    assert.equal(exited(), undefined, 'the script did not fail');
  } finally {
    await agent.stop();
    await runtime.close();
  }
});

it('a stopped listener gives its refused answer up (its session’s next agent is handed the input)', async () => {
  const { ctx, outputs, exited } = fakeContext(LISTENER);
  let tries = 0;
  ctx.sink.output = () => {
    tries++;
    return Promise.reject(new Error('database unreachable'));
  };
  // The waits between tries are the test's to end.
  const waits: Array<() => void> = [];
  ctx.clock = { ...ctx.clock, setTimeout: (fn) => waits.push(fn) as unknown as TimerHandle };
  const runtime = new ScriptRuntime();
  const agent = await runtime.start(ctx);
  try {
    await whenReady(agent);
    send(agent, 1, 'one');
    await until(() => waits.length === 1, 5_000, 'a wait after the first refusal');
    waits.shift()?.();
    await until(() => waits.length === 1, 5_000, 'a wait after the second');
    assert.equal(tries, 2);
    await agent.stop();
    waits.shift()?.();
    await new Promise((r) => setImmediate(r));
    assert.equal(tries, 2, 'no try after the stop');
    assert.equal(waits.length, 0, 'and no wait for one');
    assert.deepEqual(outputs(), []);
    assert.equal(exited(), undefined, 'a stopped agent reports no exit of its own');
  } finally {
    await runtime.close();
  }
});
