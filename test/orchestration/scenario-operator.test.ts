/**
 * The scenario end to end, as an operator lives it: a real server (on SQLite and on
 * PostgreSQL), the real CLI. A script orchestrator fans out three parts, joins on them,
 * and has two children that need a human: one asks (task_escalate), one fails with an
 * escalating policy. The operator reads `warren inbox` and answers both with
 * `warren inbox answer`; everything is asserted on the log.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachWarren, until } from '../helpers/warrens.ts';
import { createStep } from './helpers.ts';
import { liveServer } from './live-server.ts';

// biome-ignore lint/suspicious/noExplicitAny: CLI output is JSON checked by the assertions
type Any = any;

const orchestrator = {
  script: {
    steps: [
      createStep('part-a', [{ say: 'a done' }]),
      createStep('part-b', [{ say: 'b done' }]),
      createStep('part-c', [{ say: 'c done' }]),
      // Asks a human, then waits for the answer (other input passes by).
      createStep('needs-help', [
        { call: { syscall: 'task_escalate', input: { question: 'Which database do I migrate?' } } },
        { wait: { match: '\\[ANSWER\\]', as: 'answer' } },
        { say: 'migrated: ${answer.text}' },
      ]),
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
        },
      },
      { wait: { match: '\\[TASK\\] [^ ]+ "join" complete' } },
      { say: 'orchestration done' },
      // Stays, idle: its task completes when its whole subtree has ([TASK] lines pass by).
      { listen: {} },
    ],
  },
};

forEachWarren('scenario: an operator answers escalations through the CLI', (t) => {
  it('fan-out, a join on three, a question and a failure escalated and answered with warren inbox answer', {
    timeout: 90_000,
  }, async () => {
    const loc = t.location();
    const live = await liveServer({ db: loc.schema ? `${loc.url}?schema=${loc.schema}` : loc.url });
    try {
      const json = async (...args: string[]): Promise<Any> => JSON.parse(await live.ok(...args, '--json'));
      const created = await json(
        'task',
        'create',
        'orchestrate',
        '--prompt',
        'decompose the release',
        '--spawn',
        JSON.stringify(orchestrator),
      );
      const root = created.task.id as string;

      // Two escalations reach the inbox: the question, and the failure.
      const open = await until(
        async () => {
          const inbox = (await json('inbox')).escalations as Any[];
          return inbox.length >= 2 ? inbox : null;
        },
        30_000,
        'two open escalations',
      );
      const byTitle = (title: string) => open.find((e) => e.taskTitle === title);
      const question = byTitle('needs-help');
      const failure = byTitle('flaky');
      assert.ok(question && failure, JSON.stringify(open));
      assert.equal(question.question, 'Which database do I migrate?');
      assert.match(failure.question, /failed \(session crashed/);

      // The table an operator reads names both.
      const table = await live.ok('inbox');
      assert.match(table, /needs-help/);
      assert.match(table, /flaky/);

      // The failure first: its answer retries the task under the orchestrator, still waiting
      // on needs-help (answered second, it lets the subtree finish).
      await live.ok('inbox', 'answer', failure.id, 'the flag is set now; run it again');
      await until(
        async () =>
          ((await json('events', '--type', 'task.dispatched', '--limit', '1000')).events as Any[]).filter(
            (e) => e.payload.task === failure.task,
          ).length === 2,
        20_000,
        'the retried flaky task to be dispatched',
      );
      await live.ok('inbox', 'answer', question.id, 'the staging one');
      const twice = await live.cli('inbox', 'answer', question.id, 'again');
      assert.notEqual(twice.code, 0);
      assert.match(twice.stderr, /already_answered|already answered/);

      // The orchestrator completes once its whole subtree has: the join after its three
      // parts, needs-help with the operator's answer.
      const done = await until(
        async () => {
          const tk = (await json('task', 'show', root)).task;
          return tk.status === 'complete' ? tk : null;
        },
        45_000,
        'the orchestrator task to complete',
      );
      assert.equal(done.result, 'orchestration done');

      const events = async (type: string): Promise<Any[]> =>
        ((await json('events', '--type', type, '--limit', '1000')).events as Any[]).sort(
          (a, b) => a.seq - b.seq,
        );
      const tasksCreated = await events('task.created');
      const idOf = (title: string) => tasksCreated.find((e) => e.payload.title === title)?.payload.task;
      const status = await events('task.status');
      const dispatched = await events('task.dispatched');
      const completeAt = (title: string) =>
        status.find((e) => e.payload.task === idOf(title) && e.payload.to === 'complete')?.seq ?? Infinity;
      const joinDispatched = dispatched.find((e) => e.payload.task === idOf('join'));
      assert.ok(joinDispatched, 'the join was dispatched');
      for (const part of ['part-a', 'part-b', 'part-c'])
        assert.ok(completeAt(part) < joinDispatched.seq, `${part} completed before the join started`);

      // The answer reached the asking session as input, and its result carries it.
      const answered = await events('escalation.answered');
      assert.deepEqual(
        answered.map((e) => [e.payload.escalation, e.payload.delivered]),
        [
          [failure.id, 'retry'],
          [question.id, 'input'],
        ],
      );
      const helped = (await json('task', 'show', idOf('needs-help'))).task;
      assert.equal(helped.status, 'complete');
      assert.match(helped.result, /^migrated: .*\[ANSWER\].*the staging one/s);

      // The failure's answer retried the task: a second attempt, with the answer in its prompt.
      const retried = await events('task.retried');
      assert.equal(retried.length, 1);
      assert.equal(retried[0].payload.task, idOf('flaky'));
      const flakyRuns = dispatched.filter((e) => e.payload.task === idOf('flaky'));
      assert.deepEqual(
        flakyRuns.map((e) => e.payload.attempt),
        [1, 2],
      );
      const second = await json('session', 'show', flakyRuns[1].payload.session);
      const spawnedWith = ((await json('session', 'events', second.session.id)).events as Any[]).find(
        (e) => e.type === 'session.spawned',
      );
      assert.match(spawnedWith.payload.prompt, /^do flaky[\s\S]*the flag is set now; run it again/);
      assert.equal(second.session.parentId, done.sessionId, "the retry ran under the orchestrator's session");
      // It failed again, and escalated again: one open escalation is left for the operator.
      const left = (await json('inbox')).escalations as Any[];
      assert.deepEqual(
        left.map((e) => e.taskTitle),
        ['flaky'],
      );

      // The tree an operator reads.
      const tree = await live.ok('task', 'tree', root);
      for (const title of ['part-a', 'part-b', 'part-c', 'needs-help', 'flaky', 'join'])
        assert.match(tree, new RegExp(title));
    } finally {
      await live.stop();
    }
  });
});
