/**
 * The slice gate (issue 25): many callers' small pieces of untrusted work (script steps, batches
 * of route matches) share each turn of the event loop. Loop turns are counted, never timed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SliceGate } from '../../src/util/slice-gate.ts';
import { loopTurns } from '../helpers/loop-turns.ts';

describe('the slice gate', () => {
  it('callers take turns in the order they asked, and share one slice a loop turn', async () => {
    const gate = new SliceGate(0);
    const turns = loopTurns();
    const ran: Array<{ caller: string; turn: number }> = [];
    const caller = async (name: string) => {
      for (let i = 0; i < 5; i++) {
        await gate.turn();
        ran.push({ caller: name, turn: turns.now() });
      }
    };
    await Promise.all(['a', 'b', 'c'].map(caller));
    turns.stop();
    assert.equal(ran.map((r) => r.caller).join(''), 'abc'.repeat(5), 'callers alternate, one piece each');
    const perTurn = new Map<number, number>();
    for (const r of ran) perTurn.set(r.turn, (perTurn.get(r.turn) ?? 0) + 1);
    assert.deepEqual([...new Set(perTurn.values())], [1], 'a slice of 0 lets one piece through a loop turn');
  });

  it('a slice with time left lets every caller waiting in that loop turn through', async () => {
    const gate = new SliceGate(60_000);
    const turns = loopTurns();
    const at: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        await gate.turn();
        at.push(turns.now());
      }),
    );
    turns.stop();
    assert.equal(new Set(at).size, 1, `all ten ran in one loop turn (turns ${at.join(',')})`);
  });
});
