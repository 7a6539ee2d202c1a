/**
 * What a task leaves behind when it is done with: an open escalation of a task that is
 * cancelled, completed or deleted is withdrawn (logged; answering it is a conflict), and a
 * deleted task's durable room attachments go with it.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { call, forEachWarren, until } from '../helpers/warrens.ts';
import { create, fails, logOf, waitTask } from './helpers.ts';

const asksThenWaits = {
  script: {
    steps: [
      { call: { syscall: 'task_escalate', input: { question: 'may I?' } } },
      { wait: { match: 'never' } },
    ],
  },
};

forEachWarren('withdrawn escalations, forgotten attachments', (t) => {
  it('cancelling a task withdraws its open escalation; answering it then is a conflict', async () => {
    const w = await t.open();
    const tk = await create(w, { title: 'asker', spawn: asksThenWaits });
    const esc = await until(async () => (await call(w, 'inbox_list')).escalations[0], 20_000, 'the question');
    await call(w, 'task_cancel', { id: tk.id });
    await waitTask(w, tk.id, 'cancelled');
    const shown = (await call(w, 'inbox_show', { id: esc.id })).escalation;
    assert.equal(shown.status, 'withdrawn');
    assert.deepEqual((await call(w, 'inbox_list')).escalations, [], 'gone from the open inbox');
    const withdrawn = await logOf(w, 'escalation.withdrawn');
    assert.deepEqual(
      withdrawn.map((e) => [e.payload.escalation, e.payload.task, e.payload.reason]),
      [[esc.id, tk.id, 'the task is cancelled']],
    );
    await fails(call(w, 'inbox_answer', { id: esc.id, text: 'too late' }), 'conflict');
  });

  it('deleting a task withdraws its escalations and forgets its durable attachments', async () => {
    const w = await t.open();
    await call(w, 'streams_create', { name: 'war-room' });
    const tk = await create(w, { title: 'held', hold: true });
    await call(w, 'streams_attach', { session: tk.id, stream: 'war-room', durable: true });
    assert.equal((await call(w, 'streams_attachments', { session: tk.id })).durable.length, 1);
    await call(w, 'task_delete', { id: tk.id });
    const rows = await w.store.reader
      .selectFrom('orchestration_task_attachments' as never)
      .selectAll()
      .execute();
    assert.deepEqual(rows, []);
    await fails(call(w, 'task_show', { id: tk.id }), 'not_found');
    // A failed task keeps its escalation open (the operator decides); deleting it withdraws it.
    const asker = await create(w, {
      title: 'asker',
      onFailure: 'escalate',
      spawn: { script: { steps: [{ exit: 'crashed' }] } },
    });
    const esc = await until(async () => (await call(w, 'inbox_list')).escalations[0], 20_000, 'the question');
    await waitTask(w, asker.id, 'failed');
    assert.equal(
      (await call(w, 'inbox_show', { id: esc.id })).escalation.status,
      'open',
      'a failure leaves it open',
    );
    await call(w, 'task_delete', { id: asker.id });
    assert.equal((await call(w, 'inbox_show', { id: esc.id })).escalation.status, 'withdrawn');
  });
});
