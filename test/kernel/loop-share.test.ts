/**
 * Fairness at the loop (src/syscalls/loop-share.ts): at most `perTurn` calls start in one turn
 * of the loop; the rest start in later turns, one per caller in turn. Checked by the order and
 * the turns calls start in, never by a time.
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
  const share = new LoopShare(3);
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
  const share = new LoopShare(2);
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

it('refuses a count that is not a whole number ≥ 1', () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new LoopShare(bad), /callsPerTurn/);
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
