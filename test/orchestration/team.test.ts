/**
 * The team (issue 24), asserted on the log: the real Claude Code CLI as a lead builds a DAG
 * of four tasks done by claude-code workers (mock Anthropic API, a fixed script); B escalates
 * and the operator answers with `warren inbox answer`; A fails once and the lead retries it
 * (team-scenario.ts; `npm run bench -- team` measures the same run). One run, then one
 * assertion per promise. SQLite only: this is about what the agents experience.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Ev } from '../helpers/warrens.ts';
import { measure } from './team-measure.ts';
import { runTeam, type TeamRun } from './team-scenario.ts';
import { DECISION, LETTERS, type Letter, QUESTION, TITLES } from './team-script.ts';

/** The `[TASK]` line a child's task outcome gives its parent's session. */
const TASK_LINE = /\[TASK\] (task_[0-9a-z]+) "([^"\n]*)" (complete|failed|cancelled|waiting): ([^\n]*)/g;

describe('the team: a Claude Code lead, four claude-code workers, an escalation and a retry', () => {
  let run: TeamRun;
  const ids = new Map<Letter, string>();
  const of = (type: string) => run.events.filter((e) => e.type === type);

  before(
    async () => {
      run = await runTeam({ timeoutMs: 200_000 });
      for (const e of of('task.created')) {
        const l = LETTERS.find((x) => TITLES[x] === e.payload.title);
        if (l && e.payload.parent === run.leadTask) ids.set(l, String(e.payload.task));
      }
    },
    { timeout: 240_000 },
  );

  const statuses = (l: Letter) =>
    of('task.status')
      .filter((e) => e.payload.task === ids.get(l))
      .map((e) => String(e.payload.to));
  const answered = (): Ev => {
    const a = of('escalation.answered').find((e) => e.payload.task === ids.get('B'));
    assert.ok(a, "B's escalation was answered");
    return a;
  };

  it('runs the DAG to the end: A fails once and is retried, every task and the lead complete', () => {
    assert.deepEqual([...ids.keys()].sort(), [...LETTERS], 'the lead made the four tasks');
    assert.ok(statuses('A').includes('failed'), `A failed once: ${statuses('A')}`);
    for (const l of LETTERS) assert.equal(statuses(l).at(-1), 'complete', `${l}: ${statuses(l)}`);
    assert.equal(
      of('task.dispatched').filter((e) => e.payload.task === ids.get('A')).length,
      2,
      'A ran twice',
    );
    assert.equal(run.leadStatus, 'complete');
    assert.deepEqual(run.liveAtEnd, [], 'every session of the team ended');
  });

  it("holds B's escalation until the operator's CLI answer, which is not withdrawn", () => {
    assert.equal(run.answers.length, 1, 'one escalation reached the inbox');
    const [a] = run.answers;
    assert.equal(a!.code, 0, `warren inbox answer: ${a!.stderr}${a!.stdout}`);
    assert.deepEqual(of('escalation.withdrawn'), [], 'nothing withdrew the escalation');
    assert.notEqual(answered().payload.delivered, 'none', 'the answer reached the task');
    const done = of('task.status').find(
      (e) => e.payload.task === ids.get('B') && e.payload.to === 'complete',
    );
    assert.ok(done && done.seq > answered().seq, 'B completed after the answer, not before');
  });

  it('starts the dependents only after the answer', () => {
    const answer = of('escalation.answered').find((e) => e.payload.task === ids.get('B'))?.seq;
    for (const l of ['C', 'D'] as const) {
      const start = of('task.dispatched').find((e) => e.payload.task === ids.get(l));
      assert.ok(start, `${l} started`);
      assert.ok(
        answer !== undefined && start.seq > answer,
        `${l} started (seq ${start.seq}) after the answer (${answer ?? 'never answered'})`,
      );
    }
  });

  it("gives the dependents the operator's decision", () => {
    assert.deepEqual(measure(run).decisionReached, ['C', 'D'], `C and D start knowing "${DECISION}"`);
  });

  it('wakes the lead once per task outcome, with one [TASK] line each', () => {
    // The outcomes the lead must hear of, in log order: each escalation (waiting) and each end.
    const outcomes = run.events.flatMap((e) => {
      const l = LETTERS.find((x) => ids.get(x) === e.payload.task);
      if (!l) return [];
      if (e.type === 'task.escalated') return [`${l} waiting`];
      if (e.type === 'task.status' && ['complete', 'failed', 'cancelled'].includes(String(e.payload.to)))
        return [`${l} ${e.payload.to}`];
      return [];
    });
    assert.deepEqual(outcomes, [
      'A failed',
      'A complete',
      'B waiting',
      'B complete',
      'C complete',
      'D complete',
    ]);
    const inputs = run.events.filter((e) => e.type === 'session.input' && e.session_id === run.leadSession);
    const heard = inputs.map((e) =>
      [...String(e.payload.text).matchAll(TASK_LINE)].map((m) => {
        const l = LETTERS.find((x) => ids.get(x) === m[1]);
        assert.equal(m[2], l && TITLES[l], `the title of ${m[1]}`);
        return { outcome: `${l} ${m[3]}`, text: m[4]! };
      }),
    );
    assert.deepEqual(
      heard.map((h) => h.map((x) => x.outcome)),
      outcomes.map((o) => [o]),
      `one input per outcome, each one [TASK] line; the lead heard:\n${inputs.map((e) => e.payload.text).join('\n---\n')}`,
    );
    const text = (o: string) => heard.flat().find((h) => h.outcome === o)?.text ?? '';
    assert.match(text('A failed'), /\S/, 'a failure says why');
    assert.ok(text('B waiting').includes(QUESTION), 'waiting carries the question');
    assert.match(text('A complete'), /A done/, 'complete carries the result');
  });

  it('spends no model turn on [SIGTERM] after a completed task', () => {
    const sigterms = run.events.filter(
      (e) => e.type === 'session.input' && String(e.payload.text).includes('[SIGTERM]'),
    );
    assert.deepEqual(
      sigterms.map((e) => e.session_id),
      [],
      'no session took [SIGTERM] as input',
    );
    assert.equal(measure(run).totals.sigtermTurns, 0, 'no model request answered [SIGTERM]');
  });
});
