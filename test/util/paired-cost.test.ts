/**
 * bench/compare.ts's verdict (bench/lib/paired.ts): a row is slower only when its rounds
 * agree, the interval for the median cost holds it with the coverage it claims, and a round
 * that failed on one side drops out of the pairs instead of shifting them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COVERAGE, medianInterval, pairedCost, verdict } from '../../bench/lib/paired.ts';

const now = (base: number, here: number) => here / base;

describe('paired costs (bench/compare.ts)', () => {
  it('pairs round r with round r: a steady cost shows through a drifting machine', () => {
    // Each round the machine is slower, for both sides alike; now costs 10 % more every time.
    const base = [1, 2, 3, 4, 5];
    const here = base.map((b) => b * 1.1);
    const c = pairedCost(base, here, now);
    assert.equal(c.n, 5);
    assert.ok(Math.abs(c.median - 1.1) < 1e-9);
    assert.ok(Math.abs(c.low - 1.1) < 1e-9 && Math.abs(c.high - 1.1) < 1e-9);
    assert.equal(verdict(c), 'slower');
    // Unpaired, the same figures read as noise: the sides' medians (3 and 3.3) say 1.1, but
    // sorted against each other the rounds say nothing.
    const shuffled = pairedCost(base, [...here].reverse(), now);
    assert.equal(verdict(shuffled), 'unsure');
  });

  it('calls a row unsure when some rounds were no slower, and ok at or under the limit', () => {
    assert.equal(verdict(pairedCost([1, 1, 1, 1, 1], [1.2, 1.3, 0.9, 1.25, 1.1], now)), 'unsure');
    assert.equal(verdict(pairedCost([1, 1, 1, 1, 1], [1.05, 1.2, 1.3, 0.8, 1.0], now)), 'ok');
    assert.equal(verdict(pairedCost([1, 1, 1, 1, 1], [1.06, 1.06, 1.06, 1.06, 1.06], now)), 'slower');
    assert.equal(verdict(pairedCost([1, 1, 1], [1.06, 1.06, 1.06], now), 1.1), 'ok');
  });

  it('takes the cost the way the row reads: base / now where more is better', () => {
    const throughput = pairedCost([100, 100, 100, 100, 100], [80, 80, 80, 80, 80], (b, h) => b / h);
    assert.equal(throughput.median, 1.25);
    assert.equal(verdict(throughput), 'slower');
  });

  it('leaves out a round that failed on either side (NaN) rather than shifting the pairs', () => {
    const c = pairedCost([1, Number.NaN, 2, 3, 4, 5], [1.1, 1.1, Number.NaN, 3.3, 4.4, 5.5], now);
    assert.equal(c.n, 4);
    assert.ok(Math.abs(c.median - 1.1) < 1e-9);
    assert.equal(pairedCost([], [], now).n, 0);
    assert.equal(verdict(pairedCost([], [], now)), 'ok');
  });

  it('gives the order-statistic interval its true coverage', () => {
    const sorted = (n: number) => Array.from({ length: n }, (_, i) => i);
    // n = 5: only min–max reaches 90 % (1 − 2/32).
    assert.deepEqual(medianInterval(sorted(5)), { low: 0, high: 4, coverage: 1 - 2 / 32 });
    // n = 3: min–max covers 75 %, under the wanted 90 %, and is still what is given.
    assert.deepEqual(medianInterval(sorted(3)), { low: 0, high: 2, coverage: 0.75 });
    // n = 10: the 2nd lowest and highest (1 − 2·11/1024 ≥ 90 %); the 3rd would cover only 89 %.
    const ten = medianInterval(sorted(10));
    assert.equal(ten.low, 1);
    assert.equal(ten.high, 8);
    assert.ok(ten.coverage >= COVERAGE);
    // The claim holds by simulation: for costs around a known median, the interval holds it at
    // least as often as it says (a deterministic generator, so the test always sees the same).
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const n of [5, 9, 20]) {
      let held = 0;
      const trials = 4000;
      let claimed = 0;
      for (let t = 0; t < trials; t++) {
        const costs = Array.from({ length: n }, () => 1 + (random() - 0.5) * 0.4).sort((a, b) => a - b);
        const i = medianInterval(costs);
        claimed = i.coverage;
        if (i.low <= 1 && 1 <= i.high) held++;
      }
      assert.ok(held / trials >= claimed - 0.02, `n = ${n}: held ${held / trials}, claimed ${claimed}`);
    }
  });
});
