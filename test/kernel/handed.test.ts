/**
 * What a pump remembers of the messages it handed over (seq -> fd number), for an agent's
 * input report to name them: the last `max` of them, each found once, the oldest forgotten
 * first, the same across the ring's growth and wrap-around.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Handed } from '../../src/kernel/handed.ts';

it('finds each handed message once, with its fd, across growth', () => {
  const h = new Handed(100);
  for (let seq = 1; seq <= 50; seq++) h.remember(seq, seq % 3);
  for (let seq = 50; seq >= 1; seq--) assert.equal(h.take(seq), seq % 3, `seq ${seq}`);
  assert.equal(h.take(7), undefined, 'taken once');
  assert.equal(h.take(51), undefined, 'never handed');
});

it('keeps the last `max`, forgetting the oldest first, through many wrap-arounds', () => {
  const h = new Handed(64);
  for (let seq = 1; seq <= 1000; seq++) h.remember(seq, 1000 + seq);
  assert.equal(h.take(936), undefined, 'the 65th newest is forgotten');
  for (let seq = 937; seq <= 1000; seq++) assert.equal(h.take(seq), 1000 + seq, `seq ${seq}`);
  // Taken slots are reused like any other: what comes next is found.
  h.remember(2000, 5);
  assert.equal(h.take(2000), 5);
});

it('a seq handed twice (again after a restart of delivery) is found for each time', () => {
  const h = new Handed(16);
  h.remember(9, 1);
  h.remember(10, 1);
  h.remember(9, 2);
  assert.equal(h.take(9), 2, 'the newest first');
  assert.equal(h.take(9), 1);
  assert.equal(h.take(9), undefined);
});
