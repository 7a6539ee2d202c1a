import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InFlight } from '../../src/plugins/runners/in-flight.ts';
import { WarrenError } from '../../src/vocab/errors.ts';

const late = () => new WarrenError('unavailable', 'late');

describe('runner requests in flight', () => {
  it('a result settles its own request; an unknown error code from the other side becomes the fallback', async () => {
    const f = new InFlight('runtime_failed');
    const sent: number[] = [];
    const a = f.start(1, 10_000, late, () => sent.push(1));
    const b = f.start(2, 10_000, late, () => sent.push(2));
    assert.deepEqual(sent, [1, 2]);
    f.settle({ id: 2, ok: false, error: { code: 'made_up', message: 'no' } });
    f.settle({ id: 1, ok: true, value: 'yes' });
    f.settle({ id: 1, ok: true, value: 'again' }); // a duplicate answer is ignored
    assert.equal(await a, 'yes');
    await assert.rejects(b, (e: WarrenError) => e.code === 'runtime_failed' && e.message === 'no');
    const c = f.start(3, 10_000, late, () => {});
    f.settle({ id: 3, ok: false, error: { code: 'not_found', message: 'gone' } });
    await assert.rejects(c, (e: WarrenError) => e.code === 'not_found');
  });

  it('fails at its deadline, and every request fails when the wire goes', async () => {
    const f = new InFlight('internal');
    const slow = f.start(1, 20, late, () => {});
    await assert.rejects(slow, (e: WarrenError) => e.message === 'late');
    const x = f.start(2, 10_000, late, () => {});
    const y = f.start(3, 10_000, late, () => {});
    f.failAll(() => new WarrenError('unavailable', 'wire gone'));
    for (const p of [x, y]) await assert.rejects(p, (e: WarrenError) => e.message === 'wire gone');
    f.settle({ id: 2, ok: true }); // too late: nothing waits for it
  });
});
