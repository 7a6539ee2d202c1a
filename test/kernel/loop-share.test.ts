/**
 * Fairness at the loop (src/syscalls/loop-share.ts): at most `perTurn` calls start in one turn
 * of the loop, and after the first only while the turn has spent less than its slice; the rest
 * start in later turns, one per caller in turn. Checked by the order and the turns calls start
 * in, with the share's clock in the test's hands, never by a wall time.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { LoopShare } from '../../src/syscalls/loop-share.ts';
import { Warren } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';
import { loopTurns } from '../helpers/loop-turns.ts';
import { testKernel } from '../helpers/warrens.ts';

it('starts at most perTurn calls in one turn; the rest in the turns after, none lost', async () => {
  const share = new LoopShare(3, Number.POSITIVE_INFINITY);
  const turns = loopTurns();
  const startedIn: number[] = [];
  const calls = Array.from({ length: 10 }, (_, i) =>
    share.admit('operator:a', async () => {
      startedIn.push(turns.now());
      return i;
    }),
  );
  assert.equal(startedIn.length, 3, 'three start at once');
  assert.equal(share.queued, 7);
  assert.deepEqual(await Promise.all(calls), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  turns.stop();
  const perTurn = new Map<number, number>();
  for (const t of startedIn) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
  assert.ok(Math.max(...perTurn.values()) <= 3, `calls started per turn: ${JSON.stringify([...perTurn])}`);
  assert.ok(perTurn.size >= 4, 'ten calls at three a turn take four turns');
  assert.equal(share.queued, 0);
});

it('serves waiting callers round robin: one caller’s flood does not hold another’s call', async () => {
  const share = new LoopShare(2, Number.POSITIVE_INFINITY);
  const order: string[] = [];
  const call = (caller: string, tag: string) =>
    share.admit(caller, async () => {
      order.push(tag);
    });
  const flood = Array.from({ length: 50 }, (_, i) => call('session:flood', `f${i}`));
  const other = call('session:other', 'other');
  await Promise.all([...flood, other]);
  // Two started at once (f0, f1), then the round robin: f2, other, … — not after all fifty.
  assert.ok(order.indexOf('other') <= 4, `the other caller's call came ${order.indexOf('other') + 1}th`);
  assert.deepEqual(
    order.filter((t) => t !== 'other'),
    Array.from({ length: 50 }, (_, i) => `f${i}`),
    'each caller’s calls keep their order',
  );
});

it('a call that throws while starting, or rejects, rejects its caller only', async () => {
  const share = new LoopShare(1);
  const ok = share.admit('a', async () => 'first');
  const throws = share.admit('a', () => {
    throw new Error('bad start');
  });
  const rejects = share.admit('b', async () => {
    throw new Error('bad call');
  });
  const after = share.admit('a', async () => 'after');
  assert.equal(await ok, 'first');
  await assert.rejects(throws, /bad start/);
  await assert.rejects(rejects, /bad call/);
  assert.equal(await after, 'after');
});

/**
 * A share of 8 calls a turn and a 2 ms slice on the test's clock, and calls whose work moves that
 * clock by `ms` (at once, or after their first `await`, as a commit's work comes); the loop turn
 * each started in.
 */
function timedShare(ms: number, after: 'at once' | 'after an await') {
  const clock = { now: 0 };
  const share = new LoopShare(8, 2, () => clock.now);
  const turns = loopTurns();
  const startedIn: number[] = [];
  const call = () =>
    share.admit('operator:a', async () => {
      startedIn.push(turns.now());
      if (after === 'after an await') await Promise.resolve();
      clock.now += ms;
    });
  return { share, turns, startedIn, call };
}

it('after a turn’s first call, starts more only while the turn has spent less than its slice', async () => {
  const { turns, startedIn, call } = timedShare(1.5, 'at once');
  const first = [call(), call(), call()];
  assert.equal(startedIn.length, 2, 'the second started at 1.5 ms into the turn; the third, at 3 ms, waits');
  await Promise.all(first);
  turns.stop();
  assert.notEqual(startedIn[2], startedIn[0], 'the third started in a later turn');
});

it('a drain starts fewer calls once calls have cost whole turns: one costly call a turn', async () => {
  const { turns, startedIn, call } = timedShare(5, 'after an await');
  // Teach it what a call costs: a burst (nothing known yet, all of it starts in one turn, whose
  // end is watched and measured).
  await Promise.all(Array.from({ length: 4 }, call));
  assert.equal(new Set(startedIn).size, 1, 'the first burst, in one turn');
  startedIn.length = 0;
  await Promise.all(Array.from({ length: 6 }, call));
  turns.stop();
  const perTurn = new Map<number, number>();
  for (const t of startedIn) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
  assert.equal(startedIn.length, 6);
  assert.ok(Math.max(...perTurn.values()) === 1, `calls started per turn: ${JSON.stringify([...perTurn])}`);
});

/** How many immediates `fn` scheduled (the share's watch for a turn's end is one). */
async function immediatesDuring(fn: () => Promise<void>): Promise<number> {
  const real = globalThis.setImmediate;
  let scheduled = 0;
  globalThis.setImmediate = ((cb: (...args: unknown[]) => void, ...args: unknown[]) => {
    scheduled++;
    return real(cb, ...args);
  }) as typeof setImmediate;
  try {
    await fn();
  } finally {
    globalThis.setImmediate = real;
  }
  return scheduled;
}

it('one call at a time schedules nothing: the loop need not turn once more for the share', async () => {
  let clock = 0;
  const share = new LoopShare(8, 2, () => clock);
  const scheduled = await immediatesDuring(async () => {
    for (let i = 0; i < 50; i++) {
      await share.admit('operator:a', async () => {});
      clock += 3; // the next call comes a slice later
    }
  });
  assert.equal(scheduled, 0);
});

it('a call after the loop has waited for I/O starts a turn of its own, however soon it comes', async () => {
  // Calls 1 ms apart, each from a timer after the loop slept: each is alone in its turn. Counted
  // with the call before, its turn's end would be watched (an immediate) and the sleep between
  // taken for the calls' cost, which then held back the cheap burst below.
  const clock = { now: 0, idle: 0 };
  const share = new LoopShare(
    8,
    2,
    () => clock.now,
    () => clock.idle,
  );
  const scheduled = await immediatesDuring(async () => {
    for (let i = 0; i < 10; i++) {
      await share.admit('operator:a', async () => {});
      clock.now += 1;
      clock.idle += 0.9; // the loop slept until the next timer
    }
  });
  assert.equal(scheduled, 0, 'no turn was watched: each call was alone in its own');
  const started: number[] = [];
  const burst = Array.from({ length: 8 }, (_, i) =>
    share.admit('operator:a', async () => {
      started.push(i);
    }),
  );
  assert.equal(started.length, 8, 'eight calls that cost nothing all start in their turn');
  await Promise.all(burst);
});

it('cheap calls share a turn up to the count', async () => {
  let clock = 0;
  const share = new LoopShare(4, 2, () => clock);
  const started: number[] = [];
  const calls = Array.from({ length: 6 }, (_, i) =>
    share.admit('operator:a', async () => {
      started.push(i);
      clock += 0.1;
    }),
  );
  assert.deepEqual(
    started,
    [0, 1, 2, 3],
    'four at 0.1 ms each fit the 2 ms slice; the count stops the fifth',
  );
  await Promise.all(calls);
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5]);
});

it('refuses a count that is not a whole number ≥ 1, and a slice that is not a number ≥ 0', () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new LoopShare(bad), /callsPerTurn/);
  for (const bad of [-1, Number.NaN]) assert.throws(() => new LoopShare(2, bad), /callSliceMs/);
});

it('a warren’s calls go through it: a burst past the bound waits its turns, and every call is answered in order', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-loop-share-'));
  const w = await Warren.open({ dataDir: dir, kernel: testKernel, callsPerTurn: 2 });
  try {
    const op = operator();
    const { fd } = (await w.call(op, 'streams_create', { name: 'burst' })) as { fd: number };
    const writes = Array.from({ length: 20 }, (_, i) => w.call(op, 'ipc_write', { fd, message: `m${i}` }));
    // At most two of the twenty started in this turn.
    assert.ok(w.callsWaiting >= 18, `${w.callsWaiting} waiting`);
    const seqs = ((await Promise.all(writes)) as Array<{ seq: number }>).map((r) => r.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      'one caller’s writes commit in the order it made them',
    );
    assert.equal(new Set(seqs).size, 20);
    assert.equal(w.callsWaiting, 0);
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('refuses a warren with a bad callsPerTurn before opening anything', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-loop-share-'));
  try {
    await assert.rejects(Warren.open({ dataDir: dir, kernel: testKernel, callsPerTurn: 0 }), /callsPerTurn/);
    assert.deepEqual(readdirSync(dir), [], 'no database was made');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
