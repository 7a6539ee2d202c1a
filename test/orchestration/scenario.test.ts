import assert from 'node:assert/strict';
import { it } from 'node:test';
import { eventsOf, forEachWarren, sessionOf } from '../helpers/warrens.ts';
import { create, createStep, logOf, waitTask } from './helpers.ts';

/**
 * The scenario, as far as tasks go: a script orchestrator decomposes work into a
 * task DAG — a fan-out of three parts, a join that waits on all three, and one part that
 * fails and is escalated — and everything is asserted on the log.
 */

const orchestrator = {
  script: {
    steps: [
      createStep('part-a', [{ say: 'a done' }]),
      createStep('part-b', [{ say: 'b done' }]),
      createStep('part-c', [{ sleep: 50 }, { say: 'c done' }]),
      createStep('flaky', [{ exit: 'crashed' }], { onFailure: 'escalate' }),
      {
        call: {
          syscall: 'task_create',
          input: {
            title: 'join',
            prompt: 'merge the parts',
            dependsOn: ['$part_a.task.id', '$part_b.task.id', '$part_c.task.id'],
            spawn: { script: { steps: [{ say: 'joined a, b and c' }] } },
          },
          as: 'join',
        },
      },
      // Children's outcomes arrive between turns as [TASK] lines; the join's is the one it waits for.
      { wait: { match: '\\[TASK\\] [^ ]+ "join" complete' } },
      { say: 'all done: ${join.task.id}' },
    ],
  },
};

forEachWarren('scenario: a script orchestrator builds a task DAG', (t) => {
  it('fan-out, a join on three, a failure escalated; asserted on the log', async () => {
    const w = await t.open();
    const o = await create(w, { title: 'orchestrator', prompt: 'decompose', spawn: orchestrator });
    const done = await waitTask(w, o.id, 'complete', 30_000);
    const orch = done.sessionId as string;

    // The orchestrator made five tasks, each under its own task.
    const created = (await logOf(w, 'task.created')).filter((e) => e.actor === orch);
    assert.deepEqual(
      created.map((e) => e.payload.title),
      ['part-a', 'part-b', 'part-c', 'flaky', 'join'],
    );
    for (const e of created) assert.equal(e.payload.parent, o.id);
    const id = (title: string) => String(created.find((e) => e.payload.title === title)?.payload.task);
    const join = created.find((e) => e.payload.title === 'join');
    assert.deepEqual(join?.payload.dependsOn, [id('part-a'), id('part-b'), id('part-c')].sort());
    assert.equal(done.result, `all done: ${id('join')}`);

    // Each part ran in a session its parent's session spawned, joined by a pipe.
    for (const title of ['part-a', 'part-b', 'part-c', 'join']) {
      const tk = await waitTask(w, id(title), 'complete');
      assert.equal(
        (await sessionOf(w, tk.sessionId)).parentId,
        orch,
        `${title} is a child of the orchestrator`,
      );
    }
    assert.equal((await waitTask(w, id('join'), 'complete')).result, 'joined a, b and c');

    // The join was dispatched only after all three parts completed.
    const log = await logOf(w, 'task.status', 'task.dispatched', 'task.escalated');
    const completeAt = (task: string) =>
      log.find((e) => e.type === 'task.status' && e.payload.task === task && e.payload.to === 'complete')
        ?.seq ?? Infinity;
    const joinDispatched = log.find((e) => e.type === 'task.dispatched' && e.payload.task === id('join'));
    assert.ok(joinDispatched);
    for (const title of ['part-a', 'part-b', 'part-c']) {
      assert.ok(completeAt(id(title)) < joinDispatched.seq, `${title} completed before the join started`);
    }

    // The failing part failed with its reason and opened an escalation with its context.
    const flaky = await waitTask(w, id('flaky'), 'failed');
    assert.match(flaky.reason, /^session crashed/);
    const esc = log.find((e) => e.type === 'task.escalated' && e.payload.task === id('flaky'));
    assert.ok(esc, 'the failure was escalated');
    assert.equal((esc.payload.context as { endReason: string }).endReason, 'crashed');
    const failedAt = log.find(
      (e) => e.type === 'task.status' && e.payload.task === id('flaky') && e.payload.to === 'failed',
    );
    assert.ok(failedAt && failedAt.seq < esc.seq);

    // The orchestrator heard each child once, as its task's outcome, and no SIGCHLD at all.
    const signals = (await eventsOf(w, orch)).filter((e) => e.type === 'signal');
    assert.deepEqual(
      signals.map((e) => `${e.payload.signal} ${e.payload.title} ${e.payload.status}`).sort(),
      [
        'TASK flaky failed',
        'TASK join complete',
        'TASK part-a complete',
        'TASK part-b complete',
        'TASK part-c complete',
      ],
    );
    const flakyLine = (await eventsOf(w, orch)).find(
      (e) => e.type === 'stream.message' && String(e.payload.text).includes('"flaky" failed'),
    );
    assert.match(
      String(flakyLine?.payload.text),
      /failed: session crashed.*\(escalated to the operator: esc_/,
    );
  });
});
