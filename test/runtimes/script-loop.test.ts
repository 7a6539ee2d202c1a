/**
 * Script agents run inside the server, so they must share it (issue 25): `wait.match` ran its
 * patterns on the server's thread (50 agents × 10 backtracking inputs held `/healthz` 10 s),
 * and a 1,000-step script ran every step without the event loop turning (1.2 s). Played with
 * real agents on a real store: another session's command, one that needs a timer to fire,
 * completes while they run. Orders are read from the log's seqs, never from wall times.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ScriptRuntime } from '../../src/runtimes/script/runtime.ts';
import { call, type Ev, eventsOf, forEachWarren, outputs, until, waitStatus } from '../helpers/warrens.ts';
import { costlyMatch } from './script-helpers.ts';

const spawn = async (w: Parameters<typeof call>[0], script: unknown): Promise<string> =>
  (await call(w, 'ipc_spawn', { runtime: 'script', script, pipe: 'detach' })).session.id;

const seqOf = (events: Ev[], pred: (e: Ev) => boolean): number => {
  const e = events.find(pred);
  assert.ok(e, 'the event is in the log');
  return e.seq;
};

/** A script that waits a timer's worth, then says so: it needs the event loop to turn. */
const TIMER = { steps: [{ sleep: 5 }, { say: 'timer fired' }] };

forEachWarren('script agents share the event loop', (t) => {
  it('a costly wait.match counts as no match, off the loop: the agent and the server go on', async () => {
    // A long timeout, so that a match on the server's thread would hold it for seconds; an
    // input long enough (and a pattern large enough) that RE2 runs past it.
    const w = await t.open({
      runtimes: [new ScriptRuntime({ matchTimeoutMs: 2000, maxMatchInput: 256 * 1024 })],
    });
    const costly = costlyMatch(200 * 1024);
    const matcher = await spawn(w, {
      steps: [{ wait: { match: costly.pattern, as: 'got' } }, { say: 'matched ${got.text}' }],
    });
    await until(
      async () => (await call(w, 'session_show', { id: matcher })).session.status === 'idle',
      10_000,
      'idle',
    );
    await call(w, 'send', { id: matcher, text: costly.input });
    // While the pattern backtracks, a session whose command needs a timer completes.
    const other = await spawn(w, TIMER);
    await until(async () => (await outputs(w, other)).includes('timer fired'), 20_000, 'the other session');
    await until(
      async () => (await eventsOf(w, matcher)).some((e) => e.type === 'session.match_timeout'),
      20_000,
      'the match to time out',
    );
    const otherSaid = seqOf(await eventsOf(w, other), (e) => e.type === 'session.output');
    const timedOut = seqOf(await eventsOf(w, matcher), (e) => e.type === 'session.match_timeout');
    assert.ok(
      otherSaid < timedOut,
      `the other session said its line (seq ${otherSaid}) before the match gave up (seq ${timedOut})`,
    );
    // No match, so the agent still waits; a matching input goes through and the script ends.
    await call(w, 'send', { id: matcher, text: `a${'b'.repeat(2000)}` });
    await waitStatus(w, matcher, 'stopped');
    assert.deepEqual(
      (await outputs(w, matcher)).map((o) => o.endsWith(`a${'b'.repeat(2000)}`)),
      [true],
    );
  });

  it('a 1,000-step script takes turns: a timer-bound command of another session completes while it runs', async () => {
    const w = await t.open();
    const long = await spawn(w, { steps: Array.from({ length: 1000 }, (_, i) => ({ say: `step ${i}` })) });
    const other = await spawn(w, TIMER);
    await waitStatus(w, long, 'stopped', 60_000);
    await until(async () => (await outputs(w, other)).includes('timer fired'), 20_000, 'the other session');
    const otherSaid = seqOf(await eventsOf(w, other), (e) => e.type === 'session.output');
    const longEnded = seqOf(
      await eventsOf(w, long),
      (e) => e.type === 'session.output' && e.payload.text === 'step 999',
    );
    assert.ok(
      otherSaid < longEnded,
      `the other session said its line (seq ${otherSaid}) before the long script's last step (seq ${longEnded})`,
    );
  });
});
