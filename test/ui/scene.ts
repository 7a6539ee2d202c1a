/**
 * A populated warren for the console's UI tests and screenshots: a room with talking sessions
 * and a small tree, a crashed, an over-budget and a stuck session, an ACP agent that calls a
 * tool, tasks held, in review, failed and escalated (with context), schedules and findings.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledFixture } from '../helpers/compiled-fixture.ts';
import type { ServerProcess } from '../helpers/server.ts';
import { LISTENER } from './browser.ts';

const ACP_FIXTURE = fileURLToPath(new URL('../fixtures/acp-agent.ts', import.meta.url));

export interface Scene {
  room: { id: string; fd: number };
  lead: string;
  crashed: string;
  overBudget: string;
  stuck: string;
  acp: string;
  tasks: { held: string; review: string; failed: string; escalated: string };
  schedules: { nightly: string; paused: string };
  finding: string;
}

type Api = ServerProcess['api'];

async function ok<T>(p: Promise<{ status: number; json: T }>): Promise<T> {
  const r = await p;
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json;
}

const spawn = async (api: Api, body: Record<string, unknown>) =>
  (await ok(api<{ session: { id: string } }>('POST', '/v1/sessions', body))).session.id;

const task = async (api: Api, body: Record<string, unknown>) =>
  (await ok(api<{ task: { id: string } }>('POST', '/v1/tasks', body))).task.id;

/** A schedule whose fires create a held task named `title`. */
const schedule = async (api: Api, title: string, timing: Record<string, unknown>) =>
  (
    await ok(
      api<{ schedule: { id: string } }>('POST', '/v1/schedules', {
        ...timing,
        task: { title, prompt: title, hold: true },
      }),
    )
  ).schedule.id;

/** Polls `fn` until it is true (bounded). */
export async function until(what: string, fn: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 150));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** `stateRoot`: where the ACP agent keeps its state (a dir its caller removes: the rig's data dir). */
export async function populate(api: Api, stateRoot: string): Promise<Scene> {
  const room = await ok(
    api<{ stream: { id: string }; fd: number }>('POST', '/v1/streams', { name: 'planning' }),
  );
  const lead = await spawn(api, {
    title: 'lead',
    script: {
      steps: [
        { spawn: { as: 'a', title: 'alice', script: LISTENER } },
        { spawn: { as: 'b', title: 'bob', script: LISTENER } },
        { listen: { say: 'heard ${input.text}' } },
      ],
    },
  });
  await ok(api('POST', `/v1/streams/${room.stream.id}/attach`, { session: lead }));
  await ok(api('POST', `/v1/fds/${room.fd}/write`, { message: 'standup in five minutes' }));
  await ok(api('POST', `/v1/sessions/${lead}/send`, { text: 'plan the release' }));
  const crashed = await spawn(api, {
    title: 'migrator',
    script: { steps: [{ say: 'starting the migration' }, { exit: 'crashed' }] },
  });
  const overBudget = await spawn(api, {
    title: 'spender',
    budget: { costUsd: 0.01 },
    script: { steps: [{ usage: { inputTokens: 12000, outputTokens: 3400, costUsd: 0.05 } }, { listen: {} }] },
  });
  const stuck = await spawn(api, {
    title: 'stuck-worker',
    script: { steps: [{ say: 'working on it' }, { sleep: 600_000 }] },
  });
  const acp = await spawn(api, {
    title: 'acp-agent',
    runtime: 'acp',
    command: [process.execPath, compiledFixture(ACP_FIXTURE)],
    prompt: 'summarise the plan',
    cwd: tmpdir(),
    env: { ACP_FIXTURE_STATE: mkdtempSync(join(stateRoot, 'acp-state-')) },
  });
  const held = await task(api, {
    title: 'map the API',
    prompt: 'map it',
    hold: true,
    spawn: { script: LISTENER },
  });
  const review = await task(api, {
    title: 'write the summary',
    prompt: 'summarise',
    review: true,
    spawn: { script: { steps: [{ say: 'draft: three parts, one open question' }] } },
  });
  const failed = await task(api, {
    title: 'flaky import',
    prompt: 'import',
    spawn: { script: { steps: [{ say: 'importing' }, { exit: 'crashed' }] } },
  });
  const escalated = await task(api, {
    title: 'migrate the database',
    prompt: 'migrate',
    spawn: {
      script: {
        steps: [
          {
            call: {
              syscall: 'task_escalate',
              input: {
                question: 'Which database do I migrate first?',
                context: { files: ['db/migrate.sql', 'docs/ops.md'], options: ['staging', 'production'] },
              },
            },
          },
          { wait: { match: '\\[ANSWER\\]', as: 'answer' } },
          { say: 'migrating ${answer.text}' },
        ],
      },
    },
  });
  const nightly = await schedule(api, 'nightly report', {
    name: 'nightly-report',
    cron: '0 3 * * *',
    tz: 'UTC',
  });
  const paused = await schedule(api, 'sweep', { name: 'hourly-sweep', intervalMs: 3_600_000, paused: true });
  const finding = (
    await ok(
      api<{ finding: { id: string } }>('POST', '/v1/knowledge', {
        title: 'cold cache after deploys',
        body: 'The first requests after a deploy take 2 s: the cache is cold. Warm it in the deploy step.',
        tags: ['perf', 'deploy'],
        task: held,
      }),
    )
  ).finding.id;
  await ok(
    api('POST', '/v1/knowledge', {
      title: 'the staging database is a copy of production',
      body: 'Refreshed nightly; safe to migrate first.',
      tags: ['db'],
    }),
  );
  // Settled: the escalation is open, the review task waits, the failure failed, the crash and the budget stop ended.
  await until('the scene to settle', async () => {
    const inbox = await api<{ escalations: unknown[] }>('GET', '/v1/inbox');
    const t = await api<{ tasks: { id: string; status: string }[] }>('GET', '/v1/tasks?limit=1000');
    const s = await api<{ sessions: { id: string; status: string }[] }>(
      'GET',
      '/v1/sessions?all=true&limit=1000',
    );
    const status = (id: string) => t.json.tasks.find((x) => x.id === id)?.status;
    const ses = (id: string) => s.json.sessions.find((x) => x.id === id)?.status;
    return (
      inbox.json.escalations.length === 1 &&
      status(review) === 'review' &&
      status(failed) === 'failed' &&
      ses(crashed) === 'stopped' &&
      ses(overBudget) === 'stopped'
    );
  });
  return {
    room: { id: room.stream.id, fd: room.fd },
    lead,
    crashed,
    overBudget,
    stuck,
    acp,
    tasks: { held, review, failed, escalated },
    schedules: { nightly, paused },
    finding,
  };
}
