import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { StartContextPart, StartContextTask } from '../../src/contract/plugin.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { call, forEachWarren } from '../helpers/warrens.ts';
import { create } from '../orchestration/helpers.ts';
import { post } from './helpers.ts';

/** Start context: what goes ahead of a task session's first prompt, in order, within budget. */

const contextOf = (w: Warren, task: { id: string; title: string; prompt: string }) =>
  w.plugins
    .get<{ startContext(t: StartContextTask): Promise<StartContextPart | null> }>('knowledge')
    .startContext({ zone: 'default', id: task.id, title: task.title, prompt: task.prompt, attempt: 1 });

forEachWarren('knowledge start context', (t) => {
  it('workpad, then dependencies, then ancestors, then search hits; each once', async () => {
    const w = await t.open();
    const parent = await create(w, { title: 'parent', hold: true });
    const dep = await create(w, { title: 'dep', hold: true });
    const task = await create(w, {
      title: 'child',
      prompt: 'tune the postgres vacuum',
      parent: parent.id,
      dependsOn: [dep.id],
      hold: true,
    });
    assert.equal(await contextOf(w, task), null, 'nothing to say: no context at all');

    const fDep = await post(w, 'dep result', 'vacuum runs nightly', { task: dep.id });
    const fParent = await post(w, 'parent note', 'keep it simple', { task: parent.id });
    const fHit = await post(w, 'postgres tuning', 'autovacuum scale factor 0.05');
    await post(w, 'unrelated', 'frontend colours');
    await call(w, 'workpad_write', { task: task.id, body: 'todo: measure bloat', version: 0 });

    const c = (await contextOf(w, task))!;
    assert.deepEqual(c.ref, { workpad: 1, findings: [fDep.id, fParent.id, fHit.id], truncated: false });
    const order = ['todo: measure bloat', 'vacuum runs nightly', 'keep it simple', 'autovacuum scale factor'];
    const at = order.map((s) => c.text.indexOf(s));
    assert.ok(
      at.every((i, k) => i >= 0 && (k === 0 || i > at[k - 1]!)),
      `in order: ${at}`,
    );
    assert.ok(!c.text.includes('frontend colours'));
  });

  it('stays within its byte budget, whole findings or none, the workpad cut to half', async () => {
    const w = await t.open({ plugins: { config: { knowledge: { contextBytes: 1024, contextHits: 0 } } } });
    const dep = await create(w, { title: 'dep', hold: true });
    const task = await create(w, { title: 'child', dependsOn: [dep.id], hold: true });
    await call(w, 'workpad_write', { task: task.id, body: 'é'.repeat(2000), version: 0 });
    for (let i = 0; i < 10; i++) await post(w, `finding ${i}`, `${'ü'.repeat(60)} ${i}`, { task: dep.id });
    const c = (await contextOf(w, task))!;
    const bytes = Buffer.byteLength(c.text);
    assert.ok(bytes <= 1024, `${bytes} bytes`);
    assert.ok(bytes > 900, `the budget is used: ${bytes} bytes`);
    assert.equal(c.ref.truncated, true);
    assert.ok(c.text.includes('[… cut]'));
    assert.ok(!c.text.includes('\uFFFD'), 'never cut inside a character');
    const included = c.ref.findings as string[];
    assert.ok(included.length >= 1 && included.length < 10);
    // Newest first: the last posted is the first included.
    assert.match(c.text, /### finding 9 /);
  });

  it('contextBytes 0 turns it off; bad settings stop the start', async () => {
    const w = await t.open({ plugins: { config: { knowledge: { contextBytes: 0 } } } });
    const task = await create(w, { title: 'x', hold: true });
    await call(w, 'workpad_write', { task: task.id, body: 'something', version: 0 });
    assert.equal(await contextOf(w, task), null);
    await assert.rejects(
      t.open({ plugins: { config: { knowledge: { contextBytes: -1 } } } }),
      /plugins\.knowledge/,
    );
  });
});
