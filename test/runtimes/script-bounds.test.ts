import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { describe, it } from 'node:test';
import { MatchPool } from '../../src/runtimes/script/match.ts';
import { ScriptRuntime } from '../../src/runtimes/script/runtime.ts';
import { UNTRUSTED_NICE_STEPS } from '../../src/util/thread-priority.ts';
import { WarrenError } from '../../src/vocab/errors.ts';
import { newThreadNices, threadNices } from '../helpers/processes.ts';
import { costlyMatch, fakeContext, whenReady } from './script-helpers.ts';

/**
 * The attacks (issue 7): a 300,000-step script was accepted; a `wait.match` pattern such as
 * `(a+)+$` froze the server on one input. Scripts are capped; patterns are RE2 (no
 * backtracking) and run under a time bound, in a worker thread (issue 25: on the server's
 * thread, 50 agents' patterns held it 10 s; in the worker, each still burnt its 100 ms).
 */

/** This process's OS threads (Linux): a worker thread is one of them. */
const threads = () => Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
const spec = (config: Record<string, unknown>) => ({ prompt: null, config, cwd: null, model: null, env: {} });

function refusal(rt: ScriptRuntime, config: Record<string, unknown>): WarrenError {
  try {
    rt.validate(spec(config));
  } catch (error) {
    assert.ok(error instanceof WarrenError, String(error));
    assert.equal(error.code, 'invalid_input');
    return error;
  }
  assert.fail('accepted');
}

describe('script size caps', () => {
  it('refuses a 300,000-step script, without validating its steps, saying why', () => {
    const rt = new ScriptRuntime();
    const steps = Array.from({ length: 300_000 }, () => ({ sleep: 0 }));
    // As an object (a JSON body), and within the byte cap so the step cap is what refuses it.
    const big = new ScriptRuntime({ maxScriptBytes: 64 * 1024 * 1024 });
    assert.match(refusal(big, { script: { steps } }).message, /300000 steps; the limit is 1000/);
    // Counted before any step is validated (quick, whatever the steps hold): steps that are
    // all invalid are refused for their number, not for what the first one holds.
    const junk = Array.from({ length: 300_000 }, () => ({ not_a_step: 0 }));
    assert.match(refusal(big, { script: { steps: junk } }).message, /300000 steps; the limit is 1000/);
    assert.match(refusal(rt, { script: { steps } }).message, /bytes; the limit is 262144/);
  });

  it('refuses inline text over the byte cap, and a pattern over its length cap', () => {
    const rt = new ScriptRuntime();
    assert.match(
      refusal(rt, { script: `steps:\n${'  - say: hi\n'.repeat(30_000)}` }).message,
      /limit is 262144/,
    );
    assert.match(
      refusal(rt, { script: { steps: [{ wait: { match: 'a'.repeat(2000) } }] } }).message,
      /longer than 1024/,
    );
  });

  it('refuses, when the script is given, a pattern RE2 cannot run, saying so', () => {
    const rt = new ScriptRuntime();
    for (const [pattern, construct] of [
      ['(a)\\1', '\\1'],
      ['a(?=b)', '(?='],
      ['a(?!b)', '(?!'],
      ['(?<=a)b', '(?<='],
      ['(a', 'missing closing )'],
    ] as const) {
      const { message } = refusal(rt, { script: { steps: [{ say: 'x' }, { wait: { match: pattern } }] } });
      assert.ok(message.startsWith('step 2: wait.match is not a valid RE2 pattern'), message);
      assert.ok(message.includes(construct), `${message} names ${construct}`);
    }
    // What scripts use: a sender, a stream, classes, anchors, named groups, (?i).
    for (const pattern of [
      'from=operator:admin',
      '^\\[message fd=0 stream=stdin:\\S+',
      '\\bgo\\b\\d+',
      '(?<w>\\w+)',
      '(?i)done',
    ]) {
      rt.validate(spec({ script: { steps: [{ wait: { match: pattern } }] } }));
    }
  });

  it('accepts a script at the limits', () => {
    new ScriptRuntime().validate(
      spec({ script: { steps: Array.from({ length: 1000 }, () => ({ sleep: 0 })) } }),
    );
  });
});

describe('wait.match runs under a time bound', () => {
  const costly = costlyMatch();

  it('a backtracking pattern does not backtrack: (a+)+$ answers no match, not a timeout', async () => {
    // A backtracking engine tries ~2^n splits of n a's before the `!`: 2^10000 here, never
    // done, so it would answer 'timeout' even with ten seconds. RE2 reads the input once.
    const m = new MatchPool(10_000, 64 * 1024);
    try {
      assert.equal(await m.test('(a+)+$', `${'a'.repeat(10_000)}!`), false);
      assert.equal(await m.test('(a|aa)*c', 'a'.repeat(10_000)), false);
      assert.equal(await m.test('(a+)+$', 'aaaa'), true);
    } finally {
      await m.close();
    }
  });

  it('a costly pattern is cut off in the worker while the event loop turns; ordinary ones still match', async () => {
    const m = new MatchPool(100, 64 * 1024);
    try {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      const res = await m.test(costly.pattern, costly.input);
      clearInterval(timer);
      assert.equal(res, 'timeout');
      assert.ok(ticks > 0, 'timers fired while the pattern ran');
      assert.equal(
        await m.test(costly.pattern, `a${'b'.repeat(2000)}`),
        true,
        'the worker goes on after a timeout',
      );
      assert.equal(await m.test('^go\\b', 'go on'), true);
      assert.equal(await m.test('^go\\b', 'gone'), false);
      assert.equal(
        await m.test('end$', `${'x'.repeat(100_000)}end`),
        false,
        'matched on the first 64 KiB only',
      );
      const all = await Promise.all([
        m.test('a', 'a'),
        m.test(costly.pattern, costly.input),
        m.test('b', 'b'),
      ]);
      assert.deepEqual(all, [true, 'timeout', true], 'queued patterns each get their answer');
      // A stopped agent's pattern still waiting its turn is dropped at once, not run.
      const order: string[] = [];
      const gone = new AbortController();
      const slow = m.test(costly.pattern, costly.input).then((r) => order.push(`slow ${r}`));
      const dropped = m
        .test(costly.pattern, costly.input, gone.signal)
        .then((r) => order.push(`dropped ${r}`));
      gone.abort();
      await Promise.all([slow, dropped]);
      assert.deepEqual(order, ['dropped false', 'slow timeout']);
    } finally {
      await m.close();
    }
  });

  it('its worker is one thread, started by the first match and gone after close; waiting patterns end as timed out', async () => {
    const base = threads();
    const m = new MatchPool(100, 64 * 1024);
    assert.equal(threads(), base, 'no thread before a match');
    assert.equal(await m.test('a', 'a'), true);
    assert.equal(threads(), base + 1);
    const pending = [m.test(costly.pattern, costly.input), m.test('a', 'a')];
    await m.close();
    assert.deepEqual(await Promise.all(pending), ['timeout', 'timeout']);
    const until = Date.now() + 5000;
    while (threads() > base && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    assert.equal(threads(), base, 'the worker thread ended');
  });

  it("its thread gives way to the server's: a lower priority (Linux keeps one per thread)", {
    skip: process.platform !== 'linux' && 'Linux only',
  }, async () => {
    const before = threadNices();
    const m = new MatchPool(100, 64 * 1024);
    try {
      assert.equal(await m.test('a', 'a'), true);
      const lower = Math.min(19, getPriority() + UNTRUSTED_NICE_STEPS);
      assert.deepEqual(newThreadNices(before, threadNices()), [lower], 'the worker, niced below this thread');
    } finally {
      await m.close();
    }
  });

  it('a script agent waiting on a costly pattern passes over the costly input and stays responsive', async () => {
    const { ctx, outputs, events, exited } = fakeContext({
      script: { steps: [{ wait: { match: costly.pattern, as: 'got' } }, { say: 'matched ${got.text}' }] },
    });
    const runtime = new ScriptRuntime();
    const agent = await runtime.start(ctx);
    try {
      await whenReady(agent);
      agent.deliver({ messages: [], text: costly.input });
      // The event loop is free while the pattern runs: a timer set now fires before the match
      // is over (it runs its 100 ms bound in the worker). On this thread, the match would have
      // ended, and said so, before any timer could fire. An order of events, not a duration.
      const timedOutBeforeTimer = await new Promise<boolean>((r) =>
        setTimeout(() => r(events().some((e) => e.type === 'match_timeout')), 0),
      );
      assert.equal(timedOutBeforeTimer, false, 'a timer fired while the match was running');
      await whenReady(agent);
      assert.ok(events().some((e) => e.type === 'match_timeout'));
      const fits = `a${'b'.repeat(2000)}`;
      agent.deliver({
        messages: [{ seq: 2, fd: 0, stream: 'stdin', from: 'operator:admin', text: fits, kind: 'message' }],
        text: fits,
      });
      const end = Date.now() + 20_000;
      while (!exited() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(outputs(), [`matched ${fits}`]);
      assert.equal(exited()?.reason, 'completed');
    } finally {
      await agent.stop();
      await runtime.close();
    }
  });
});
