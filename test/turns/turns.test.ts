import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { call, forEachWarren } from '../helpers/warrens.ts';
import { fails } from '../orchestration/helpers.ts';
import { adopted, awaitTurn, openBridge, send, workRoot } from './helpers.ts';

forEachWarren('turns: durable turns over the kernel', (t) => {
  describe('send_prompt, await_turn, read_turn', () => {
    it('a turn completes from the runtime’s end of turn, with its final response', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const sid = await adopted(w, work);
      const { turn } = await send(w, sid, 'first');
      assert.equal(turn.status, 'active');
      const done = await awaitTurn(w, turn.turn_id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(
        {
          text: done.final_response.text,
          source: done.final_response.source,
          truncated: done.final_response.truncated,
        },
        { text: done.final_response.text, source: 'runtime_end_of_turn', truncated: false },
      );
      assert.match(done.final_response.text, /^done: .*first$/);

      // Seed 004's read_turn: ok, the durable turn with its schema version, the advisory status.
      const read = await call(w, 'bridge_read_turn', { turn_id: turn.turn_id });
      assert.equal(read.ok, true);
      assert.equal(read.turn.status, 'completed');
      assert.equal(read.turn.schema_version, 1);
      assert.deepEqual(read.advisory_status, { live: true, state: 'idle_or_unknown', activity: null });
    });

    it('a second prompt is refused with active_turn_exists; queue waits; force supersedes', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      // Takes one input and then never ends its turn until a second arrives.
      // Takes a, stays busy a while, then answers every input.
      const sid = await adopted(w, work, {
        steps: [{ wait: {} }, { sleep: 400 }, { listen: { say: 'done: ${input.text}' } }],
      });
      const sentA = await send(w, sid, 'a');
      const a = sentA.turn;
      // Seed 004's answer: its top-level fields, `queued`/`delivered` among them.
      const { turn: _turn, superseded_turn_id: _sup, ...top } = sentA;
      assert.deepEqual(top, {
        ok: true,
        session_id: sid,
        turn_id: a.turn_id,
        active_turn_id: a.turn_id,
        status: 'active',
        queued: false,
        delivered: true,
      });
      await fails(send(w, sid, 'b'), 'active_turn_exists', /queue: true/);
      const sentB = await send(w, sid, 'b', { queue: true });
      const b = sentB.turn;
      assert.equal(b.status, 'queued');
      assert.deepEqual(
        [sentB.status, sentB.queued, sentB.delivered, sentB.active_turn_id],
        ['queued', true, false, a.turn_id],
      );
      const c = await send(w, sid, 'c', { force: true });
      assert.equal(c.superseded_turn_id, a.turn_id);
      const readA = await call(w, 'bridge_read_turn', { turn_id: a.turn_id });
      assert.deepEqual([readA.turn.status, readA.turn.superseded_by], ['superseded', c.turn.turn_id]);
      const log = await call(w, 'events', { type: 'turn.superseded' });
      assert.equal(log.events[0].payload.turn_id, a.turn_id);
      // c is delivered and answered once the agent is free; then the promoted b.
      const cDone = await awaitTurn(w, c.turn.turn_id);
      assert.match(cDone.final_response.text, /^done: .*c$/);
      const bDone = await awaitTurn(w, b.turn_id);
      assert.equal(bDone.status, 'completed');
      assert.match(bDone.final_response.text, /^done: .*b$/);
      assert.ok(bDone.started_at >= cDone.ended_at);
      await fails(send(w, sid, 'x', { queue: true, force: true }), 'invalid_input');
    });

    it('await_turn is bounded: timed_out with the turn as it stands', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const sid = await adopted(w, work, { steps: [{ wait: {} }, { sleep: 60_000 }] });
      const { turn } = await send(w, sid, 'never ends');
      const r = await call(w, 'bridge_await_turn', { turn_id: turn.turn_id, timeout_ms: 200 });
      assert.deepEqual([r.timed_out, r.turn.status], [true, 'active']);
      // report_status cancelled records the coordinator's cancellation; the process lives on.
      const rep = await call(w, 'bridge_report_status', {
        session_id: sid,
        status: 'cancelled',
        summary: 'not needed any more',
        allow_mutation: true,
      });
      assert.equal(rep.turn_ended, true);
      const done = await awaitTurn(w, turn.turn_id, 1000);
      assert.deepEqual([done.status, done.final_response.source], ['cancelled', 'report_status']);
      assert.notEqual((await call(w, 'session_show', { id: sid })).session.status, 'stopped');
    });
  });
});
