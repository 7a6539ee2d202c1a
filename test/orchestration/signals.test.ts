/**
 * Task-shaped signals (issue 24): a task's lead hears each outcome of its child tasks once, as
 * one `[TASK]` line, and nothing else of their sessions; an escalation holds its task until
 * the operator answers; a task that cannot start tells its lead. Wake-ups are counted: the
 * inputs delivered to the lead (`session.input`), each one a model turn for an LLM lead.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { completeTask } from '../../src/plugins/orchestration/ops.ts';
import { asSession, call, type Ev, eventsOf, forEachWarren, until, waitStatus } from '../helpers/warrens.ts';
import { create, engineOf, listens, saysThenIdles, task, waitTask } from './helpers.ts';

type W = Parameters<typeof call>[0];

/** What the lead was handed, input by input (each one a wake-up). */
const inputsOf = async (w: W, id: string): Promise<string[]> =>
  (await eventsOf(w, id))
    .filter((e: Ev) => e.type === 'session.input')
    .map((e: Ev) => String(e.payload.text));

/** The `[TASK]` lines among a session's inputs. */
const taskLines = (inputs: string[]) =>
  inputs.flatMap((t) => t.split('\n')).filter((l) => l.startsWith('[TASK]'));

/** A lead: a task whose session listens (each input a turn), up and idle. */
async function lead(w: W) {
  const l = await create(w, { title: 'lead', spawn: listens });
  const running = await waitTask(w, l.id, 'running');
  await waitStatus(w, running.sessionId, 'idle');
  return { id: l.id as string, session: running.sessionId as string };
}

/** A worker that asks the operator, ends its turn, and acts on the answer when it comes. */
const asker = {
  script: {
    steps: [
      { call: { syscall: 'task_escalate', input: { question: 'Which database do I migrate?' } } },
      { say: 'asked the operator; ending my turn' },
      { wait: { match: '\\[ANSWER\\]', as: 'answer' } },
      { say: 'migrated the one the operator named' },
      { wait: {} },
    ],
  },
};

forEachWarren('task-shaped signals', (t) => {
  it('a finished task wakes its lead once, with one [TASK] line, and its session ends without a turn', async () => {
    const w = await t.open();
    const l = await lead(w);
    const k = await create(w, {
      title: 'part "a"',
      parent: l.id,
      spawn: saysThenIdles('a is done\nall of it'),
    });
    const done = await waitTask(w, k.id, 'complete');
    await waitStatus(w, done.sessionId, 'stopped');
    await until(async () => (await inputsOf(w, l.session)).length >= 1);
    await waitStatus(w, l.session, 'idle');
    const inputs = await inputsOf(w, l.session);
    assert.deepEqual(
      inputs,
      [`[TASK] ${k.id} "part 'a'" complete: a is done all of it`],
      'one wake-up, one line',
    );
    // Its session got nothing to answer: one turn, the one with the result.
    const worker = await eventsOf(w, done.sessionId);
    assert.equal(worker.filter((e) => e.type === 'session.input').length, 0);
    assert.equal((await call(w, 'session_show', { id: done.sessionId })).session.turns, 1);
  });

  it('an escalation holds its task whatever its session does; the answer reaches the session; dependents wait', async () => {
    const w = await t.open();
    const l = await lead(w);
    const k = await create(w, { title: 'asker', parent: l.id, spawn: asker });
    const dep = await create(w, {
      title: 'after',
      parent: l.id,
      dependsOn: [k.id],
      spawn: saysThenIdles('after ran'),
    });
    const waiting = await waitTask(w, k.id, 'waiting');
    assert.match(waiting.reason, /^waiting on the operator: Which database do I migrate\?/);
    // The session ends its turn with a last message: the task still waits, visibly.
    const s = await until(async () => {
      const x = (await call(w, 'session_show', { id: waiting.sessionId })).session;
      return x.status === 'idle' && x.lastMessage ? x : null;
    });
    assert.equal(s.lastMessage, 'asked the operator; ending my turn');
    await w.kernel.reconcile();
    assert.equal((await task(w, k.id)).status, 'waiting');
    const d = await task(w, dep.id);
    assert.equal(d.status, 'pending');
    assert.equal(d.reason, `waiting on ${k.id} (waiting on the operator)`);
    const [esc] = (await call(w, 'inbox_list')).escalations;
    assert.equal(esc.status, 'open');
    // Its own session cannot complete it while it waits (the operation, under the tool gate).
    await assert.rejects(
      completeTask(
        w.kernel,
        engineOf(w).tables,
        { kind: 'session', sessionId: s.id, zone: 'default', depth: 2 },
        k.id,
      ),
      { code: 'conflict' },
    );

    const answered = await call(w, 'inbox_answer', { id: esc.id, text: 'staging' });
    assert.equal(answered.delivered, 'input');
    const done = await waitTask(w, k.id, 'complete');
    assert.equal(done.result, 'migrated the one the operator named');
    const heard = (await eventsOf(w, s.id))
      .filter((e) => e.type === 'session.input')
      .map((e) => String(e.payload.text));
    assert.equal(heard.length, 1);
    assert.match(heard[0] as string, /\[ANSWER\][\s\S]*Answer: staging/);
    // The dependent ran after the decision.
    assert.equal((await waitTask(w, dep.id, 'complete')).result, 'after ran');

    // The lead: one line per outcome, waiting then complete for the asker, complete for the other.
    // The dependent's outcome reaches the lead after the task completes: wait for its line (the
    // lead may be idle already), then for the lead to be idle again, and read what it got.
    await until(async () => taskLines(await inputsOf(w, l.session)).length >= 3);
    await waitStatus(w, l.session, 'idle');
    const lines = taskLines(await inputsOf(w, l.session));
    assert.deepEqual(lines, [
      `[TASK] ${k.id} "asker" waiting: Which database do I migrate?`,
      `[TASK] ${k.id} "asker" complete: migrated the one the operator named`,
      `[TASK] ${dep.id} "after" complete: after ran`,
    ]);
    assert.equal((await inputsOf(w, l.session)).length, 3, 'three outcomes, three wake-ups');
  });

  it("the answer reanimates the task's session when it stopped while waiting", async () => {
    const w = await t.open();
    const l = await lead(w);
    const k = await create(w, { title: 'asker', parent: l.id, spawn: asker });
    const waiting = await waitTask(w, k.id, 'waiting');
    await until(async () => (await call(w, 'session_show', { id: waiting.sessionId })).session.lastMessage);
    // The lead lets go of it: reaped (a clean stop), and still the task waits.
    const fds = (await call(w, 'ipc_list_fds', {}, asSession(l.session))).fds.filter(
      (f: { streamName: string }) => f.streamName.endsWith(waiting.sessionId),
    );
    for (const f of fds) await call(w, 'ipc_close', { fd: f.fd, force: true }, asSession(l.session));
    await waitStatus(w, waiting.sessionId, 'stopped');
    await w.kernel.reconcile();
    assert.equal((await task(w, k.id)).status, 'waiting');
    const [esc] = (await call(w, 'inbox_list')).escalations;
    const answered = await call(w, 'inbox_answer', { id: esc.id, text: 'staging' });
    assert.deepEqual([answered.delivered, answered.session], ['input', waiting.sessionId]);
    const done = await waitTask(w, k.id, 'complete');
    assert.equal(done.sessionId, waiting.sessionId, 'the same session, resumed');
    assert.equal(done.result, 'migrated the one the operator named');
  });

  it('a task that cannot start fails and tells its lead; its dependent shows what it waits on', async () => {
    const w = await t.open();
    await call(w, 'persona_create', {
      name: 'helper',
      runtime: 'script',
      config: { script: { steps: [{ say: 'helped' }] } },
    });
    const l = await lead(w);
    const k = await create(
      w,
      { title: 'doomed', parent: l.id, personaId: 'helper', hold: true },
      asSession(l.session),
    );
    const dep = await create(w, {
      title: 'next',
      parent: l.id,
      dependsOn: [k.id],
      spawn: saysThenIdles('x'),
    });
    await call(w, 'persona_delete', { name: 'helper' });
    await call(w, 'task_start', { id: k.id });
    const failed = await waitTask(w, k.id, 'failed');
    assert.match(failed.reason, /^could not start: .*helper/);
    await until(async () => taskLines(await inputsOf(w, l.session)).length >= 1);
    assert.deepEqual(taskLines(await inputsOf(w, l.session)), [
      `[TASK] ${k.id} "doomed" failed: ${failed.reason}`,
    ]);
    await until(async () => (await task(w, dep.id)).reason === `waiting on failed task ${k.id}`);
  });

  it('a session of its own runtime: a task without a runtime is refused when made, naming the field', async () => {
    const w = await t.open();
    const l = await lead(w);
    await assert.rejects(
      create(w, { title: 'bare' }, asSession(l.session)),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, 'invalid_input');
        assert.match(e.message, /give `script`/);
        assert.doesNotMatch(e.message, /config\.script/);
        return true;
      },
    );
  });
});
