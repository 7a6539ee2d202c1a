import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Log } from '../../src/util/log.ts';
import { slowStep } from '../../src/util/slow-step.ts';

/** A log that keeps its warnings, and tells whoever waits for the next one. */
function recording() {
  const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
  let wake: (() => void) | undefined;
  const log: Log = {
    error: () => {},
    info: () => {},
    debug: () => {},
    warn: (obj, msg) => {
      warnings.push({ obj, msg });
      wake?.();
    },
  };
  const nextWarning = () => new Promise<void>((r) => (wake = r));
  return { log, warnings, nextWarning };
}

describe('slowStep: a stop that hangs says where', () => {
  it('a step still running is logged by name, again while it runs, and not after it ends', async (t) => {
    const { log, warnings, nextWarning } = recording();
    // The step's own timer does not hold the process open (a stop must not be kept by it).
    const alive = setInterval(() => {}, 1000);
    t.after(() => clearInterval(alive));
    const result = await slowStep(
      log,
      'shutdown: stopping agents',
      async () => {
        await nextWarning();
        await nextWarning();
        return 'done';
      },
      10,
    );
    assert.equal(result, 'done');
    const seen = warnings.length;
    assert.ok(seen >= 2);
    assert.deepEqual(
      new Set(warnings.map((w) => w.msg)),
      new Set(['shutdown: stopping agents: still running']),
    );
    assert.equal(warnings[0]?.obj.step, 'shutdown: stopping agents');
    // Ended: no more warnings, however long we wait for one (a few of its periods).
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(warnings.length, seen);
  });

  it('a quick step says nothing; a failing one fails as it would', async () => {
    const { log, warnings } = recording();
    assert.equal(await slowStep(log, 'quick', async () => 1, 1000), 1);
    await assert.rejects(
      slowStep(log, 'bad', async () => Promise.reject(new Error('no')), 1000),
      /no/,
    );
    assert.equal(warnings.length, 0);
  });
});
