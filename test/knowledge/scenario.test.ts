import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import type { Warren } from '../../src/syscalls/warren.ts';
import { manualClock } from '../helpers/clock.ts';
import { call, eventsOf, forEachWarren, outputs } from '../helpers/warrens.ts';
import { create, waitTask } from '../orchestration/helpers.ts';
import { create as createSchedule, firesOf, tick } from '../scheduling/helpers.ts';

/**
 * The issue's scenario: a nightly schedule creates a task whose agent receives its
 * dependencies' findings in its first prompt (asserted on the log), posts a finding, and the
 * next task sees it. The clock is the test's: it is moved to 02:00 and the scheduler ticked.
 */
const createTask = (w: Warren, input: Record<string, unknown>) => create(w, input);
/** A minute before the first nightly fire (02:00 UTC). */
const T0 = Date.parse('2030-03-04T01:59:00.000Z');

/** The task the schedule's one fire created. */
async function firedTask(w: Warren, scheduleId: string): Promise<{ id: string }> {
  const fires = await firesOf(w, scheduleId);
  assert.equal(fires.length, 1, 'the nightly schedule fired once');
  assert.equal(fires[0].dueAt, Date.parse('2030-03-04T02:00:00.000Z'));
  return { id: fires[0].target as string };
}

const posts = (title: string, body: string) => ({
  call: { syscall: 'knowledge_post', input: { title, body, tags: ['nightly'] }, as: 'posted' },
});
/** The agent says its first prompt (so the log shows what it received), then posts. */
const echoThenPost = (title: string, body: string) => ({
  script: { steps: [{ say: '${self.prompt}' }, posts(title, body), { say: 'posted ${posted.finding.id}' }] },
});

forEachWarren('scenario: findings flow to the next task through start context', (t) => {
  it('a dependency’s finding reaches the first prompt; the posted finding reaches the next task', async () => {
    const clock = manualClock(T0);
    const w = await t.open({ clock });
    const survey = await createTask(w, {
      title: 'survey',
      prompt: 'survey the caches',
      spawn: { script: { steps: [posts('eu-west cache', 'the eu-west cache is cold on mondays')] } },
    });
    const schedule = await createSchedule(w, {
      name: 'nightly',
      cron: '0 2 * * *',
      tz: 'UTC',
      task: {
        title: 'nightly warmup',
        prompt: 'warm what is cold',
        dependsOn: [survey.id],
        // Held, so the test can write its workpad first; a plain nightly task starts at once.
        hold: true,
        spawn: echoThenPost('warmed', 'warmed eu-west at 02:00; took 40 s'),
      },
    });
    clock.set(Date.parse('2030-03-04T02:00:00.020Z'));
    await tick(w);
    const nightly = await firedTask(w, schedule.id);
    const next = await createTask(w, {
      title: 'morning check',
      prompt: 'check the warmup',
      dependsOn: [nightly.id],
      spawn: echoThenPost('checked', 'all warm'),
    });
    await call(w, 'workpad_write', { task: nightly.id, body: 'plan: warm eu-west first', version: 0 });
    await call(w, 'task_start', { id: nightly.id });

    const n = await waitTask(w, nightly.id, 'complete', 30_000);
    const m = await waitTask(w, next.id, 'complete', 30_000);
    const surveyFinding = (await call(w, 'knowledge_search', { task: survey.id })).findings[0];
    const nightlyFinding = (await call(w, 'knowledge_search', { task: nightly.id })).findings[0];
    assert.equal(nightlyFinding.title, 'warmed');
    assert.equal(nightlyFinding.session, n.sessionId, 'a finding keeps the session it came from');

    // The nightly agent's first prompt held its workpad and its dependency's finding, then its prompt.
    const [first] = await outputs(w, n.sessionId);
    assert.match(first!, /^<warren-context source="knowledge">/);
    assert.match(first!, /plan: warm eu-west first/);
    assert.match(first!, /the eu-west cache is cold on mondays/);
    assert.match(first!, /warm what is cold$/);
    const prefix = first!.slice(0, -'\n\nwarm what is cold'.length);

    // The log keeps a reference and a digest of it, never the text.
    const spawned = (await eventsOf(w, n.sessionId)).find((e) => e.type === 'session.spawned')!;
    assert.equal(spawned.payload.prompt, 'warm what is cold');
    const ctx = spawned.payload.context as Record<string, Any>;
    assert.equal(ctx.sha256, createHash('sha256').update(prefix).digest('hex'));
    assert.equal(ctx.bytes, Buffer.byteLength(prefix));
    assert.deepEqual(ctx.parts, [
      { plugin: 'knowledge', workpad: 1, findings: [surveyFinding.id], truncated: false },
    ]);
    assert.ok(!JSON.stringify(spawned).includes('cold on mondays'));

    // The next task saw the finding the nightly agent posted.
    const [firstOfNext] = await outputs(w, m.sessionId);
    assert.match(firstOfNext!, /### warmed \[fnd_[^\]]*; tags: nightly; task task_/);
    assert.match(firstOfNext!, /warmed eu-west at 02:00; took 40 s/);
    const spawnedNext = (await eventsOf(w, m.sessionId)).find((e) => e.type === 'session.spawned')!;
    assert.ok(
      ((spawnedNext.payload.context as Any).parts[0].findings as string[]).includes(nightlyFinding.id),
    );
  });
});

// biome-ignore lint/suspicious/noExplicitAny: log payloads are loosely typed in tests
type Any = any;
