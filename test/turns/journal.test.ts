import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asSession, call, forEachWarren } from '../helpers/warrens.ts';
import { fails } from '../orchestration/helpers.ts';
import { adopted, awaitTurn, echoAgent, openBridge, send, workRoot } from './helpers.ts';

forEachWarren('turns: the journal, questions, reports', (t) => {
  describe('watch_events', () => {
    it('answers at once when events match (timeout 0 too), else wakes on the next, else times out', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const sid = await adopted(w, work);
      const now = await call(w, 'bridge_watch_events', { timeout_ms: 0, event_types: ['coordinator.*'] });
      assert.deepEqual([now.timed_out, now.events[0].kind], [false, 'coordinator.session_registered']);
      assert.deepEqual(now.transport, { mcp: 'long_poll', push_subscriptions: false });
      const from = now.latest_seq;
      const quiet = await call(w, 'bridge_watch_events', {
        after_seq: from,
        event_types: ['turn.*'],
        timeout_ms: 150,
      });
      assert.deepEqual([quiet.timed_out, quiet.events.length], [true, 0]);
      assert.ok(quiet.latest_seq >= from);
      const waiting = call(w, 'bridge_watch_events', {
        after_seq: quiet.latest_seq,
        session_id: sid,
        event_types: ['turn.completed'],
        timeout_ms: 10_000,
      });
      const { turn } = await send(w, sid, 'x'.repeat(1000));
      const woke = await waiting;
      assert.deepEqual(
        [woke.timed_out, woke.events[0].turn_id, woke.events[0].payload_ref],
        [false, turn.turn_id, `turn:${turn.turn_id}`],
      );
      // Seed 004's record: exactly its fields, and warren's two.
      const rec = woke.events[0];
      assert.deepEqual(Object.keys(rec).sort(), [
        'actor',
        'id',
        'kind',
        'metadata',
        'payload_ref',
        'payload_truncated',
        'question_id',
        'report_id',
        'schema_version',
        'seq',
        'session_id',
        'summary',
        'timestamp',
        'turn_id',
      ]);
      assert.deepEqual([rec.schema_version, rec.kind, rec.session_id], [1, 'turn.completed', sid]);
      assert.equal(new Date(rec.timestamp).toISOString(), rec.timestamp);
      assert.match(rec.summary, /^turn\.completed turn_/);
      for (const v of Object.values(rec.metadata)) assert.notEqual(typeof v, 'object', 'scalars only');
      // Summaries are bounded: the long output is its size, with a pointer to the event.
      const out = await call(w, 'bridge_watch_events', {
        after_seq: from,
        event_types: ['session.output'],
        timeout_ms: 0,
      });
      assert.ok(out.events[0].metadata.text_bytes > 1000);
      assert.equal(out.events[0].metadata.text, undefined);
      assert.equal(out.events[0].payload_truncated, true);
      const many = await call(w, 'bridge_watch_events', { after_seq: 0, limit: 1000, timeout_ms: 0 });
      assert.ok(many.events.length <= 100);
    });
  });

  describe('a session that ends mid-turn', () => {
    it('killed: its active turn fails, and a queued one is not left waiting forever', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const sid = await adopted(w, work, { steps: [{ wait: {} }, { sleep: 60_000 }] });
      const a = (await send(w, sid, 'long')).turn;
      const b = (await send(w, sid, 'next', { queue: true })).turn;
      await call(w, 'kill', { id: sid });
      const failed = await awaitTurn(w, a.turn_id);
      assert.equal(failed.status, 'failed');
      assert.match(failed.error, /session stopped/);
      const next = await awaitTurn(w, b.turn_id);
      assert.equal(next.status, 'failed');
    });
  });

  describe('questions and reports', () => {
    it('an agent asks; the coordinator lists and answers; the answer is delivered; the turn goes on', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const sid = await adopted(w, work, {
        steps: [
          { wait: {} },
          {
            call: {
              syscall: 'bridge_ask_question',
              input: { text: 'A or B?', options: ['A', 'B'] },
              as: 'q',
            },
          },
          { wait: { as: 'answer' } },
          { say: 'chose ${answer.text}' },
          { listen: {} },
        ],
      });
      const { turn } = await send(w, sid, 'pick one');
      const open = await until(async () => {
        const r = await call(w, 'bridge_list_questions', {});
        return r.questions.length ? r.questions : null;
      });
      assert.deepEqual(
        [open[0].text, open[0].turn_id, open[0].options],
        ['A or B?', turn.turn_id, ['A', 'B']],
      );
      // The agent is idle, waiting: its turn is not over while its question is open.
      const mid = await call(w, 'bridge_await_turn', { turn_id: turn.turn_id, timeout_ms: 300 });
      assert.equal(mid.timed_out, true);
      await fails(
        call(w, 'bridge_answer_question', {
          question_id: open[0].question_id,
          answer: 'C',
          allow_mutation: true,
        }),
        'invalid_input',
      );
      const a = await call(w, 'bridge_answer_question', {
        question_id: open[0].question_id,
        answer: 'B',
        allow_mutation: true,
      });
      assert.equal(a.question.status, 'answered');
      await fails(
        call(w, 'bridge_answer_question', {
          question_id: open[0].question_id,
          answer: 'A',
          allow_mutation: true,
        }),
        'already_answered',
      );
      const done = await awaitTurn(w, turn.turn_id);
      assert.match(done.final_response.text, new RegExp(`^chose .*\\[ANSWER ${open[0].question_id}\\] B$`));
      assert.deepEqual((await call(w, 'bridge_list_questions', {})).questions, []);
    });

    it('an agent reports on itself only; a completed report ends the turn with its evidence', async () => {
      const { root, work } = workRoot();
      const w = await openBridge(t, root);
      const sid = await adopted(w, work, { steps: [{ wait: {} }, { sleep: 60_000 }] });
      const other = await adopted(w, work, echoAgent);
      const { turn } = await send(w, sid, 'work');
      const me = asSession(sid);
      await fails(
        call(w, 'bridge_report_status', { session_id: other, status: 'completed', summary: 'x' }, me),
        'forbidden',
      );
      const r = await call(
        w,
        'bridge_report_status',
        { session_id: sid, status: 'completed', summary: 'wrote out.md', evidence: ['out.md'] },
        me,
      );
      assert.equal(r.report.turn_id, turn.turn_id);
      const done = await awaitTurn(w, turn.turn_id, 1000);
      assert.deepEqual(
        [done.status, done.final_response.text, done.evidence],
        ['completed', 'wrote out.md', ['out.md']],
      );
      const snap = await call(w, 'bridge_coordination_status', {});
      assert.equal(snap.reports[0].summary, 'wrote out.md');
      assert.ok(snap.latest_event_seq > 0);
      assert.ok(snap.events.some((e: { kind: string }) => e.kind === 'report.written'));
    });
  });
});

async function until<T>(fn: () => Promise<T | null>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

forEachWarren('events: the after cursor', (t) => {
  it('events after a seq, oldest first, the same over the syscall REST and CLI call', async () => {
    const { root, work } = workRoot();
    const w = await openBridge(t, root);
    await adopted(w, work);
    const all = (await call(w, 'events', { limit: 1000 })).events
      .map((e: { seq: number }) => e.seq)
      .reverse();
    const mid = all[Math.floor(all.length / 2)];
    const after = (await call(w, 'events', { after: mid, limit: 3 })).events.map(
      (e: { seq: number }) => e.seq,
    );
    assert.deepEqual(after, all.filter((s: number) => s > mid).slice(0, 3));
  });
});
