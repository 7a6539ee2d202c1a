import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openEscalation } from '../../src/plugins/orchestration/escalations.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';
import { scansOf } from '../helpers/plans.ts';
import {
  asSession,
  call,
  eventsOf,
  forEachWarren,
  outputs,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';
import { type LiveServer, liveServer } from './live-server.ts';
import { insertTask, orchestrationTables, taskRow } from './task-rows.ts';

/** An agent that says back every input it gets. */
const echo = { steps: [{ listen: { say: 'got ${input.text}' } }] };

async function taskWithSession(w: Warren, script: object = echo) {
  const spawned = await call(w, 'ipc_spawn', { script, title: 'worker' });
  const session: string = spawned.session.id;
  const task = await insertTask(w, { session_id: session, title: 'migrate the db' });
  return { session, task };
}

const escalate = (w: Warren, session: string, input: Record<string, unknown>) =>
  call(w, 'task_escalate', input, asSession(session));

forEachWarren('the operator inbox', (t) => {
  it('task_escalate: the question and its context appear in the inbox, with the task', async () => {
    const w = await t.open();
    const { session, task } = await taskWithSession(w);
    const out = await escalate(w, session, {
      question: 'Which database should I migrate first?',
      context: { tried: ['staging'], options: 2 },
    });
    assert.equal(out.task, task);
    assert.match(out.escalation, /^esc_/);

    const { escalations, next } = await call(w, 'inbox_list');
    assert.equal(next, null);
    assert.equal(escalations.length, 1);
    const [e] = escalations;
    assert.deepEqual(
      [e.id, e.task, e.taskTitle, e.session, e.question, e.status],
      [out.escalation, task, 'migrate the db', session, 'Which database should I migrate first?', 'open'],
    );
    assert.ok(e.ageMs >= 0);
    const shown = (await call(w, 'inbox_show', { id: out.escalation })).escalation;
    assert.deepEqual(shown.context, { tried: ['staging'], options: 2 });
    assert.equal(shown.taskSession, session);
    assert.equal(shown.answer, null);

    const logged = (await eventsOf(w, session)).find((ev) => ev.type === 'task.escalated');
    assert.ok(logged, 'task.escalated is in the session log');
    assert.equal(logged.payload.escalation, out.escalation);
    assert.equal(logged.payload.task, task);
  });

  it('task_escalate: refused without a task, an oversized question or context', async () => {
    const w = await t.open();
    const loner = (await call(w, 'ipc_spawn', { script: echo })).session.id;
    await assert.rejects(escalate(w, loner, { question: 'anyone?' }), { code: 'not_found' });
    const { session } = await taskWithSession(w);
    await assert.rejects(escalate(w, session, { question: 'x'.repeat(4097) }), { code: 'invalid_input' });
    await assert.rejects(escalate(w, session, { question: 'é'.repeat(2049) }), { code: 'invalid_input' });
    await assert.rejects(escalate(w, session, { question: 'ok', context: { blob: 'y'.repeat(17_000) } }), {
      code: 'invalid_input',
    });
    await assert.rejects(call(w, 'task_escalate', { question: 'from outside' }), { code: 'forbidden' });
    assert.deepEqual((await call(w, 'inbox_list', { all: true })).escalations, []);
  });

  it('an answer reaches the live session as input, is logged, and cannot be given twice', async () => {
    const w = await t.open();
    const { session, task } = await taskWithSession(w);
    const { escalation } = await escalate(w, session, { question: 'Ship on Friday?' });

    const answered = await call(w, 'inbox_answer', { id: escalation, text: 'No: wait for Monday' });
    assert.deepEqual(answered, { escalation, task, delivered: 'input', session });

    const said = await until(
      async () => (await outputs(w, session)).find((o) => o.includes('[ANSWER]')),
      5000,
      'the agent to read the answer',
    );
    assert.match(said, /\[ANSWER\] An operator answered your escalation esc_\S+ \(task task_\S+\)\./);
    assert.match(said, /Question: Ship on Friday\?/);
    assert.match(said, /Answer: No: wait for Monday/);

    const log = await eventsOf(w, session);
    const ev = log.find((e) => e.type === 'escalation.answered');
    assert.ok(ev, 'escalation.answered is in the session log');
    assert.deepEqual(
      [ev.actor, ev.payload.escalation, ev.payload.task, ev.payload.answer, ev.payload.by],
      ['operator:admin', escalation, task, 'No: wait for Monday', 'operator:admin'],
    );
    // The answer was logged before the input it became, in the same commit.
    const input = log.find(
      (e) => e.type === 'stream.message' && String(e.payload.text).startsWith('[ANSWER]'),
    );
    assert.ok(input && input.seq > ev.seq, 'the [ANSWER] input follows the answered event');

    const shown = (await call(w, 'inbox_show', { id: escalation })).escalation;
    assert.equal(shown.status, 'answered');
    assert.equal(shown.answer, 'No: wait for Monday');
    assert.equal(shown.answeredBy, 'operator:admin');
    assert.ok(shown.answeredAt >= shown.createdAt);
    assert.deepEqual((await call(w, 'inbox_list')).escalations, []);
    assert.equal((await call(w, 'inbox_list', { all: true })).escalations[0].status, 'answered');

    const again = await call(w, 'inbox_answer', { id: escalation, text: 'Yes after all' }).catch((e) => e);
    assert.equal(again.code, 'already_answered');
    assert.equal(again.status, 409);
    assert.equal((await call(w, 'inbox_show', { id: escalation })).escalation.answer, 'No: wait for Monday');
  });

  it("an answer wakes a suspended session of the task, as an operator's send does", async () => {
    const location = t.location();
    const w1 = await t.open({ location });
    const { session, task } = await taskWithSession(w1);
    const { escalation } = await escalate(w1, session, { question: 'Still there?' });
    await waitStatus(w1, session, 'idle');
    await w1.close();
    const w = await t.open({ location, kernel: { resumeOnStart: false } });
    assert.equal((await sessionOf(w, session)).status, 'suspended');
    const answered = await call(w, 'inbox_answer', { id: escalation, text: 'Yes' });
    assert.deepEqual([answered.task, answered.delivered, answered.session], [task, 'input', session]);
    await until(
      async () =>
        (await outputs(w, session)).some((o) => o.includes('[ANSWER]') && o.includes('Answer: Yes')),
      5000,
      'the woken agent to read the answer',
    );
    assert.ok((await eventsOf(w, session)).some((e) => e.type === 'session.reanimated'));
  });

  it("task_escalate is a task worker's and an orchestrator's, at any depth; the inbox is for operators", async () => {
    const w = await t.open();
    for (const depth of [1, 2, 5]) {
      assert.ok(w.gate.forSpawn({ depth, job: 'worker' }, null).includes('task_escalate'));
      assert.ok(w.gate.forSpawn({ depth }, null).includes('task_escalate'));
    }
    for (const name of ['inbox_list', 'inbox_show', 'inbox_answer']) {
      assert.ok(!w.gate.forSpawn({ depth: 0 }, null).includes(name), `${name} is for operators`);
    }
  });

  it('answering a failure escalation whose session is gone retries the task with the answer in its prompt', async () => {
    const w = await t.open();
    const { session, task } = await taskWithSession(w);
    await call(w, 'kill', { id: session });
    await w.store.writer.write(async (tx) => {
      await tx.db
        .updateTable('orchestration_tasks' as never)
        .set({ status: 'failed', reason: 'crashed', result: 'half done', ended_at: tx.now } as never)
        .where('id' as never, '=', task as never)
        .execute();
    });
    const escalation = await orchestrationTables(w).write((tx) =>
      openEscalation(tx, w.kernel.ids, {
        zone: 'default',
        taskId: task,
        sessionId: null,
        question: 'The task failed (crashed). Retry it?',
        context: { endReason: 'crashed' },
        actor: 'kernel',
      }),
    );
    assert.equal((await call(w, 'inbox_list')).escalations[0].session, null);

    const answered = await call(w, 'inbox_answer', { id: escalation, text: 'Retry with --safe' });
    assert.deepEqual(answered, { escalation, task, delivered: 'retry', session: null });

    const row = await taskRow(w, task);
    assert.deepEqual(
      [row.status, row.held, row.result, row.reason, row.ended_at],
      ['pending', 0, null, null, null],
    );
    assert.ok(row.prompt.startsWith('do the thing'), 'the original prompt stays');
    assert.match(row.prompt, /Operator's answer to your escalation \(esc_\S+\): Retry with --safe/);
    assert.match(row.prompt, /The question was: The task failed \(crashed\)\. Retry it\?/);

    const retried = (await call(w, 'events', { type: 'task.retried', limit: 10 })).events;
    assert.equal(retried.length, 1);
    assert.deepEqual(retried[0].payload, { task, escalation });
    const answeredEv = (await call(w, 'events', { type: 'escalation.answered', limit: 10 })).events;
    assert.equal(answeredEv[0].payload.delivered, 'retry');
    assert.ok(answeredEv[0].seq < retried[0].seq);
  });

  it('a task not dispatched yet gets the answer in its prompt; a closed task only records it', async () => {
    const w = await t.open();
    const pending = await insertTask(w, { status: 'pending', held: 1 });
    const done = await insertTask(w, { status: 'complete' });
    const open = (task: string) =>
      orchestrationTables(w).write((tx) =>
        openEscalation(tx, w.kernel.ids, {
          zone: 'default',
          taskId: task,
          sessionId: null,
          question: 'q?',
          context: {},
          actor: 'kernel',
        }),
      );
    const a = await call(w, 'inbox_answer', { id: await open(pending), text: 'use plan B' });
    assert.equal(a.delivered, 'prompt');
    const row = await taskRow(w, pending);
    assert.deepEqual([row.status, row.held], ['pending', 1], 'not released: it was held');
    assert.match(row.prompt, /use plan B/);
    const b = await call(w, 'inbox_answer', { id: await open(done), text: 'too late' });
    assert.equal(b.delivered, 'none');
    assert.equal((await taskRow(w, done)).status, 'complete');
    assert.equal((await call(w, 'events', { type: 'task.retried' })).events.length, 0);
  });

  it('two operators answering at once: one answer stands, the other is already_answered', async () => {
    const w = await t.open();
    const { session } = await taskWithSession(w);
    const { escalation } = await escalate(w, session, { question: 'A or B?' });
    const results = await Promise.allSettled([
      call(w, 'inbox_answer', { id: escalation, text: 'A' }, operator('ann')),
      call(w, 'inbox_answer', { id: escalation, text: 'B' }, operator('bob')),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(won.length, 1);
    assert.equal(lost.length, 1);
    assert.equal(lost[0]!.reason.code, 'already_answered');
    const shown = (await call(w, 'inbox_show', { id: escalation })).escalation;
    const winner = results[0]!.status === 'fulfilled' ? ['A', 'operator:ann'] : ['B', 'operator:bob'];
    assert.deepEqual([shown.answer, shown.answeredBy], winner);
    const logged = (await call(w, 'events', { type: 'escalation.answered' })).events;
    assert.equal(logged.length, 1, 'one answer logged');
    const inputs = (await eventsOf(w, session)).filter(
      (e) => e.type === 'stream.message' && String(e.payload.text).startsWith('[ANSWER]'),
    );
    assert.equal(inputs.length, 1, 'one answer delivered');
  });

  it("operators see and answer only their own zone's escalations", async () => {
    const w = await t.open();
    const { session } = await taskWithSession(w);
    const { escalation } = await escalate(w, session, { question: 'mine?' });
    const stranger = operator('eve', 'other');
    assert.deepEqual((await call(w, 'inbox_list', { all: true }, stranger)).escalations, []);
    await assert.rejects(call(w, 'inbox_show', { id: escalation }, stranger), { code: 'not_found' });
    await assert.rejects(call(w, 'inbox_answer', { id: escalation, text: 'hijack' }, stranger), {
      code: 'not_found',
    });
    assert.equal((await call(w, 'inbox_show', { id: escalation })).escalation.status, 'open');
    await assert.rejects(call(w, 'inbox_answer', { id: 'esc_nope', text: 'x' }), { code: 'not_found' });
  });

  it('stays paged and indexed with 10,000 escalations', async () => {
    const w = await t.open();
    const task = await insertTask(w);
    const N = 10_000;
    const ids: string[] = [];
    await w.store.writer.write(async (tx) => {
      for (let i = 0; i < N; i += 500) {
        const rows = Array.from({ length: 500 }, (_, j) => {
          const id = w.kernel.ids.id('esc');
          ids.push(id);
          const n = i + j;
          return {
            id,
            zone: n % 10 === 9 ? 'other' : 'default',
            task_id: task,
            session_id: null,
            question: `q${n}`,
            context: '{}',
            status: n % 2 === 0 ? 'open' : 'answered',
            answer: null,
            answered_by: null,
            created_at: tx.now,
            answered_at: null,
          };
        });
        await tx.db
          .insertInto('orchestration_escalations' as never)
          .values(rows as never)
          .execute();
      }
    });
    await w.store.analyze();
    const expected = ids.filter((_, n) => n % 2 === 0 && n % 10 !== 9);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    // Indexed, proved by the plans of the queries the pages ran (no full pass over the
    // escalations, no sort of the zone's whole inbox per page), on both backends; not by
    // the time a page takes, which a loaded machine decides.
    const { queries, scans } = await scansOf(w.store, ['orchestration_escalations'], async () => {
      do {
        const page = await call(w, 'inbox_list', { limit: 1000, ...(after ? { after } : {}) });
        seen.push(...page.escalations.map((e: { id: string }) => e.id));
        after = page.next ?? undefined;
        pages++;
      } while (after);
    });
    assert.deepEqual(seen, expected, 'every open escalation of the zone, once, in order');
    assert.equal(pages, Math.ceil(expected.length / 1000));
    assert.ok(queries >= pages, `${queries} queries for ${pages} pages`);
    assert.deepEqual(scans, [], 'full scans or sorts');
    const first = await call(w, 'inbox_list');
    assert.equal(first.escalations.length, 200);
    assert.equal(first.next, expected[199]);
  });
});

describe('warren inbox through the real CLI against a real server', () => {
  let live: LiveServer;
  before(async () => {
    live = await liveServer();
  });
  after(async () => {
    await live?.stop();
  });

  it('an agent escalates; the operator lists the inbox and answers; the agent reads the answer', async () => {
    // The agent waits for a go, asks its question, then says back whatever it hears.
    const script = {
      steps: [
        { wait: { as: 'go' } },
        {
          call: {
            syscall: 'task_escalate',
            input: { question: 'Drop the legacy table?', context: { rows: 12 } },
          },
        },
        { listen: { say: 'heard ${input.text}' } },
      ],
    };
    const spawned = await live.server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      script,
      title: 'cleaner',
    });
    const session = spawned.json.session.id;
    const task = 'task_01cli0000000000000000000';
    live.insertTask({ id: task, title: 'clean up the schema', session_id: session, status: 'running' });
    await live.ok('send', session, 'go');

    const listed = await until(
      async () => {
        const out = JSON.parse(await live.ok('inbox', '--json')) as { escalations: Array<{ id: string }> };
        return out.escalations[0];
      },
      10_000,
      'the escalation to reach the inbox',
    );
    const table = await live.ok('inbox');
    const [header, row] = table.trim().split('\n');
    assert.deepEqual(header!.trim().split(/\s{2,}/), ['ID', 'Task', 'Title', 'Question', 'Age', 'Session']);
    assert.match(
      row!,
      new RegExp(
        `^${listed.id}\\s+${task}\\s+clean up the schema\\s+Drop the legacy table\\?\\s+\\d+s\\s+${session}`,
      ),
    );
    assert.match(await live.ok('inbox', 'show', listed.id), /context\s+\{"rows":12\}/);

    const answered = await live.ok('inbox', 'answer', listed.id, 'Yes, after the backup');
    assert.match(
      answered,
      new RegExp(`answered ${listed.id} \\(task ${task}\\); delivered to session ${session}`),
    );
    await until(
      async () => {
        const { json } = await live.server.api<{
          events: Array<{ type: string; payload: { text?: string } }>;
        }>('GET', `/v1/sessions/${session}/events?limit=1000`);
        return json.events.some(
          (e) =>
            e.type === 'session.output' &&
            /heard .*\[ANSWER\].*Answer: Yes, after the backup/s.test(e.payload.text ?? ''),
        );
      },
      10_000,
      'the agent to hear the answer',
    );

    const twice = await live.cli('inbox', 'answer', listed.id, 'No');
    assert.equal(twice.code, 1);
    assert.match(
      twice.stderr,
      /error \[already_answered\]: escalation \S+ was already answered by operator:/,
    );
    assert.equal((await live.ok('inbox')).trim(), 'inbox empty: no open escalations');
    // The same over REST.
    const rest = await live.server.api<{ escalations: Array<{ id: string; status: string }> }>(
      'GET',
      '/v1/inbox?all=true',
    );
    assert.deepEqual(
      rest.json.escalations.map((e) => [e.id, e.status]),
      [[listed.id, 'answered']],
    );
    const again = await live.server.api<{ error: { code: string } }>(
      'POST',
      `/v1/inbox/${listed.id}/answer`,
      { text: 'x' },
    );
    assert.deepEqual([again.status, again.json.error.code], [409, 'already_answered']);
    assert.match(await live.ok('inbox', '--all'), /answered by operator:/);
  });
});
