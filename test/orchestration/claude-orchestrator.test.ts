/**
 * The scenario with a real Claude Code orchestrator: the `claude` CLI
 * (node_modules/.bin/claude) against the scripted model API on loopback, warren's MCP over
 * real HTTP. The orchestrator is itself a task; through its MCP tools it fans out three
 * parts, a join on them, a part that asks a human and a part that fails and escalates. An
 * operator answers both over REST; its subtree finishes and the orchestrator's task
 * completes with its last word. SQLite only: the store paths are the script scenario's,
 * which runs on both backends; this one is about the real agent.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ClaudeCodeRuntime } from '../../src/runtimes/claude-code/index.ts';
import { startHttp } from '../helpers/http.ts';
import {
  allToolResults,
  conversationText,
  type MockAnthropic,
  type Script,
  startMockAnthropic,
} from '../helpers/mock-anthropic.ts';
import { call, type Ev, forEachWarren, until } from '../helpers/warrens.ts';
import { logOf, task, waitTask } from './helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'warren-claude-orch-'));
const closers: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.allSettled(closers.splice(0).map((c) => c()));
  rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
});

const TOOL = 'mcp__warren__task_create';
const DONE = 'orchestration done';

/** A script child task, as the orchestrator asks for it. */
const part = (title: string, steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: TOOL,
  input: { title, prompt: `do ${title}`, spawn: { script: { steps } }, ...extra },
});

forEachWarren(
  'scenario: a Claude Code orchestrator builds a task DAG',
  (t) => {
    it('fan-out, a join on three, a question and a failure escalated and answered; asserted on the log', {
      timeout: 120_000,
    }, async () => {
      const home = join(root, 'home');
      const cwd = join(root, 'work');
      mkdirSync(home, { recursive: true });
      mkdirSync(cwd, { recursive: true });
      // The orchestrator's model: one turn fans out, the next adds the join on what came
      // back, then it waits; once the join's [TASK] line says it is complete, its word is DONE.
      const script: Script = (req) => {
        const made = allToolResults(req).filter((r) => r.name === TOOL);
        if (made.length === 0)
          return {
            text: 'splitting the release into parts',
            toolUses: [
              part('part-a', [{ say: 'a done' }]),
              part('part-b', [{ say: 'b done' }]),
              part('part-c', [{ say: 'c done' }]),
              part('needs-help', [
                { call: { syscall: 'task_escalate', input: { question: 'Which database do I migrate?' } } },
                { wait: { match: '\\[ANSWER\\]', as: 'answer' } },
                { say: 'migrated: ${answer.text}' },
              ]),
              part('flaky', [{ exit: 'crashed' }], { onFailure: 'escalate' }),
            ],
          };
        if (made.length === 5) {
          const ids = made
            .map((r) => JSON.parse(r.text) as { task: { id: string; title: string } })
            .filter((r) => r.task.title.startsWith('part-'))
            .map((r) => r.task.id);
          return {
            toolUses: [
              {
                name: TOOL,
                input: {
                  title: 'join',
                  prompt: 'merge the parts',
                  dependsOn: ids,
                  spawn: { script: { steps: [{ say: 'joined a, b and c' }] } },
                },
              },
            ],
          };
        }
        return /\[TASK\] \S+ "join" complete/.test(conversationText(req))
          ? { text: DONE }
          : { text: 'waiting for my tasks' };
      };
      const model: MockAnthropic = await startMockAnthropic(script);
      closers.push(() => model.close());
      const h = await startHttp(t, { runtimes: [new ClaudeCodeRuntime()] });
      const w = h.warren;

      const orch = (
        await call(w, 'task_create', {
          title: 'orchestrate',
          prompt: 'ORCHESTRATE: release v2 in parts',
          spawn: {
            runtime: 'claude-code',
            cwd,
            env: { ...model.env(), HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') },
          },
        })
      ).task;

      // Both escalations reach the inbox; the failure's answer retries it (while the
      // orchestrator still waits on needs-help), then the question is answered. Until then
      // the asking task waits, whatever its session does, and so does nothing after it.
      const open = await until(
        async () => {
          const inbox = (await call(w, 'inbox_list')).escalations;
          return inbox.length >= 2 ? inbox : null;
        },
        60_000,
        'two escalations from the orchestrator’s children',
      );
      const of = (title: string) => open.find((e: { taskTitle: string }) => e.taskTitle === title);
      const answered = await h.api('POST', `/v1/inbox/${of('flaky').id}/answer`, { text: 'retry it now' });
      assert.equal(answered.status, 200, JSON.stringify(answered.json));
      await until(
        async () =>
          (await logOf(w, 'task.dispatched')).filter((e) => e.payload.task === of('flaky').task).length === 2,
        20_000,
        'the retry of flaky',
      );
      const asking = await waitTask(w, of('needs-help').task, 'waiting');
      assert.match(asking.reason, /^waiting on the operator: Which database/);
      await w.kernel.reconcile();
      assert.equal((await task(w, asking.id)).status, 'waiting', 'the escalation holds its task');
      const answer = await h.api('POST', `/v1/inbox/${of('needs-help').id}/answer`, { text: 'staging' });
      assert.equal(answer.status, 200);
      assert.equal((answer.json as { delivered: string }).delivered, 'input');

      const done = await waitTask(w, orch.id, 'complete', 60_000);
      assert.equal(done.result, DONE);

      // The orchestrator's calls, on its log: five task_create in one turn, then the join.
      const oe: Ev[] = (await call(w, 'session_events', { id: done.sessionId, limit: 10_000 })).events;
      const calls = oe.filter((e) => e.type === 'session.tool_call').map((e) => e.payload);
      assert.deepEqual(
        calls.map((c) => [c.syscall, (c.input as { title: string }).title]),
        [
          ['task_create', 'part-a'],
          ['task_create', 'part-b'],
          ['task_create', 'part-c'],
          ['task_create', 'needs-help'],
          ['task_create', 'flaky'],
          ['task_create', 'join'],
        ],
      );
      for (const r of oe.filter((e) => e.type === 'session.tool_result'))
        assert.equal(r.payload.isError, false, String(r.payload.text));

      const created = await logOf(w, 'task.created');
      const idOf = (title: string) => created.find((e) => e.payload.title === title)?.payload.task as string;
      for (const title of ['part-a', 'part-b', 'part-c', 'needs-help', 'flaky', 'join'])
        assert.equal(
          created.find((e) => e.payload.title === title)?.actor,
          done.sessionId,
          `${title} made by claude`,
        );
      const log = await logOf(w, 'task.status', 'task.dispatched');
      const joinStart = log.find((e) => e.type === 'task.dispatched' && e.payload.task === idOf('join'));
      assert.ok(joinStart);
      for (const title of ['part-a', 'part-b', 'part-c']) {
        const at = log.find(
          (e) => e.type === 'task.status' && e.payload.task === idOf(title) && e.payload.to === 'complete',
        );
        assert.ok(at && at.seq < joinStart.seq, `${title} completed before the join started`);
      }
      assert.match((await task(w, idOf('needs-help'))).result, /\[ANSWER\][\s\S]*staging/);
      assert.equal((await task(w, idOf('join'))).result, 'joined a, b and c');

      // Claude heard each outcome of each child once, as a [TASK] line, between its turns, and
      // no SIGCHLD of their sessions: one line per outcome (flaky failed twice: two outcomes).
      const inputs = oe.filter((e) => e.type === 'session.input').map((e) => String(e.payload.text));
      const lines = inputs.flatMap((x) => x.split('\n'));
      assert.deepEqual(
        lines.filter((l) => l.startsWith('[SIGCHLD]')),
        [],
        'no SIGCHLD for a task child',
      );
      const outcomes = lines
        .filter((l) => l.startsWith('[TASK]'))
        .map((l) => {
          const m = /^\[TASK\] (\S+) "([^"]*)" (\w+):/.exec(l);
          return `${m?.[2]} ${m?.[3]}`;
        })
        .sort();
      assert.deepEqual(outcomes, [
        'flaky failed',
        'flaky failed',
        'join complete',
        'needs-help complete',
        'needs-help waiting',
        'part-a complete',
        'part-b complete',
        'part-c complete',
      ]);
      // Wake-ups: every input it was handed carries at least one outcome (nothing else woke it).
      for (const x of inputs) assert.match(x, /\[TASK\]/, 'woken only by task outcomes');
      assert.ok(
        inputs.length <= outcomes.length,
        `${inputs.length} wake-ups for ${outcomes.length} outcomes`,
      );
      // The model saw the warren tools it used, and nothing answered from outside the mock.
      assert.ok(model.requests.some((r) => r.url.startsWith('/v1/messages')));
    });
  },
  ['sqlite'],
);
