import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedMatcher } from '../../src/runtimes/script/match.ts';
import { ScriptRuntime } from '../../src/runtimes/script/runtime.ts';
import { WarrenError } from '../../src/vocab/errors.ts';
import { fakeContext, whenReady } from './script-helpers.ts';

/**
 * The attacks (issue 7): a 300,000-step script was accepted; a `wait.match` pattern such as
 * `(a+)+$` froze the server on one input. Scripts are capped; patterns run under a time bound.
 */
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
  it('refuses a 300,000-step script, quickly and saying why', () => {
    const rt = new ScriptRuntime();
    const steps = Array.from({ length: 300_000 }, () => ({ sleep: 0 }));
    const t = Date.now();
    // As an object (a JSON body), and within the byte cap so the step cap is what refuses it.
    const big = new ScriptRuntime({ maxScriptBytes: 64 * 1024 * 1024 });
    assert.match(refusal(big, { script: { steps } }).message, /300000 steps; the limit is 1000/);
    assert.ok(Date.now() - t < 2000, `took ${Date.now() - t} ms`);
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

  it('accepts a script at the limits', () => {
    new ScriptRuntime().validate(
      spec({ script: { steps: Array.from({ length: 1000 }, () => ({ sleep: 0 })) } }),
    );
  });
});

describe('wait.match runs under a time bound', () => {
  const evil = `${'a'.repeat(40)}!`;

  it('a backtracking pattern is cut off, and ordinary ones still match', () => {
    const m = new BoundedMatcher(100, 64 * 1024);
    const t = Date.now();
    assert.equal(m.test('(a+)+$', evil), 'timeout');
    assert.ok(Date.now() - t < 1000, `took ${Date.now() - t} ms`);
    assert.equal(m.test('(a+)+$', 'aaaa'), true);
    assert.equal(m.test('^go\\b', 'go on'), true);
    assert.equal(m.test('^go\\b', 'gone'), false);
    assert.equal(m.test('end$', `${'x'.repeat(100_000)}end`), false, 'matched on the first 64 KiB only');
  });

  it('a script agent waiting on (a+)+$ passes over the evil input promptly and stays responsive', async () => {
    const { ctx, outputs, events, exited } = fakeContext({
      script: { steps: [{ wait: { match: '(a+)+$', as: 'got' } }, { say: 'matched ${got.text}' }] },
    });
    const agent = await new ScriptRuntime().start(ctx);
    try {
      await whenReady(agent);
      const t = Date.now();
      agent.deliver({ messages: [], text: evil });
      // The event loop is free again soon: a timer fires well within a second.
      await new Promise((r) => setTimeout(r, 0));
      assert.ok(Date.now() - t < 1000, `the loop was blocked ${Date.now() - t} ms`);
      await whenReady(agent);
      assert.ok(events().some((e) => e.type === 'match_timeout'));
      agent.deliver({ messages: [], text: 'aaaa' });
      const end = Date.now() + 20_000;
      while (!exited() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(outputs(), ['matched aaaa']);
      assert.equal(exited()?.reason, 'completed');
    } finally {
      await agent.stop();
    }
  });
});
