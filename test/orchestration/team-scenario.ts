/**
 * The team scenario, shared by `npm run bench -- team` and test/orchestration/team.test.ts:
 * a real warren (SQLite, HTTP on 127.0.0.1) runs the real Claude Code CLI as a lead task's
 * session; the lead builds a four-task DAG done by claude-code workers; worker B escalates
 * and the operator answers with `warren inbox answer` (bin/warren.js, a child process);
 * worker A fails its first attempt and the lead retries it. The model is the scripted mock
 * (team-script.ts).
 *
 * One thing happens at a time, so what the lead is told, and in how many inputs, does not
 * depend on the machine's speed: a worker's model request is held until the team is quiet
 * (every live session idle with nothing due, or held here; no task about to start; the log
 * still for a moment), then released one at a time, A before B before C before D. The lead
 * is never held. The operator answers only when nothing else can happen: as a person who
 * reads the inbox later, after the worker ended its turn.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureOperatorKey } from '../../src/kernel/operator-keys.ts';
import { buildHttpServer } from '../../src/surfaces/http/server.ts';
import { Warren } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';
import { type MessagesRequest, type MockAnthropic, startMockAnthropic } from '../helpers/mock-anthropic.ts';
import { binEnv, WARREN_BIN } from '../helpers/server.ts';
import type { Ev } from '../helpers/warrens.ts';
import {
  conversationOf,
  DECISION,
  LEAD_PROMPT,
  LETTERS,
  type Letter,
  lastInput,
  type Role,
  roleOf,
  sessionOf,
  type TeamMemory,
  TITLES,
  teamTurn,
  type WorkerSpawn,
} from './team-script.ts';

const op = operator();
/** The order of release: the lead (never held) first, then A, B, C, D. */
const rank = (title: string | null): number => LETTERS.findIndex((l) => TITLES[l] === title);
/** How long the log must stay still before the team counts as quiet. */
const SETTLE_MS = 250;
/** How long the team may stay quiet with the lead's task open before the run gives up. */
const STUCK_MS = 3_000;
/** How long a finished team's sessions get to end on their own. */
const END_MS = 10_000;

/** One model request as the mock saw it. */
export interface ModelRequest {
  role: Role | null;
  /** The warren session (from the system prompt), or null. */
  session: string | null;
  /** The CLI's conversation id. */
  conversation: string;
  /** JSON characters of the whole request body. */
  chars: number;
  /** JSON characters of the warren tools it offers (`mcp__warren__*`: name, description, schema). */
  warrenToolChars: number;
  /** JSON characters of the other tools it offers (Claude Code's own: Bash, Read, Edit, …). */
  otherToolChars: number;
  /** The input it answers: the last user message, tool results included. */
  lastInput: string;
  /** The first user message: the prompt, with any start context ahead of it. */
  firstInput: string;
  /** A request the CLI made on its own (no tools): a title, a summary. */
  side: boolean;
}

export interface OperatorAnswer {
  escalation: string;
  code: number;
  stdout: string;
  stderr: string;
}

export interface TeamRun {
  /** The zone's whole log, oldest first. */
  events: Ev[];
  requests: ModelRequest[];
  answers: OperatorAnswer[];
  leadTask: string;
  leadSession: string;
  /** The lead task's status when the run ended. */
  leadStatus: string;
  /** Sessions of the team still live when the run ended (the run then stops them). */
  liveAtEnd: string[];
  ms: number;
}

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs are checked by their own schemas
type Any = any;

interface Held {
  role: Role;
  session: string | null;
  at: number;
  release: () => void;
}

/** Run the scenario; everything it started is stopped before it returns or throws. */
export async function runTeam(
  opts: { timeoutMs?: number; log?: (line: string) => void } = {},
): Promise<TeamRun> {
  const t0 = Date.now();
  const deadline = t0 + (opts.timeoutMs ?? 240_000);
  const say = opts.log ?? (() => {});
  const root = mkdtempSync(join(tmpdir(), 'warren-team-'));
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const home = join(root, 'home');
    const cwd = join(root, 'work');
    mkdirSync(join(home, '.claude'), { recursive: true });
    mkdirSync(cwd, { recursive: true });

    const held: Held[] = [];
    const requests: ModelRequest[] = [];
    const memory: TeamMemory = {};
    let spawn: WorkerSpawn | undefined;
    let failure: Error | undefined;
    const mock: MockAnthropic = await startMockAnthropic(async (req, info) => {
      const role = roleOf(req);
      requests.push(record(req, info.headers, false));
      if (role && role !== 'lead') {
        await new Promise<void>((release) =>
          held.push({ role, session: sessionOf(req), at: Date.now(), release }),
        );
      }
      try {
        return teamTurn(req, info.headers, spawn!, memory);
      } catch (error) {
        failure ??= error as Error;
        throw error;
      }
    }, {});
    stops.push(() => mock.close());
    spawn = {
      runtime: 'claude-code',
      cwd,
      env: { ...mock.env(), HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') },
    };

    // Unconfined, like the rest of the suite: the workers' homes and the mock live in the host's /tmp.
    const w = await Warren.open({
      dataDir: join(root, 'data'),
      // The lead hands its workers a home of their own: names an operator allows (grants.env).
      kernel: { cursorFlushMs: 10, containment: 'none', envAllow: ['HOME', 'CLAUDE_CONFIG_DIR'] },
    });
    stops.push(() => w.close());
    const dataDir = join(root, 'data');
    const { key } = await ensureOperatorKey(w.store, w.kernel.ids, dataDir);
    if (!key) throw new Error('a fresh warren should have made an operator key');
    const app = await buildHttpServer(w);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    w.kernel.config.publicUrl = url;
    // The HTTP server closes before the warren (stops run last first).
    stops.push(() => app.close());

    const call = (name: string, input: Record<string, unknown> = {}): Promise<Any> => w.call(op, name, input);
    // A task's session is a worker (its own task's tools); the lead's job is to orchestrate.
    const leadSpawn = { ...spawn, job: 'orchestrator' };
    const lead = (await call('task_create', { title: 'lead', prompt: LEAD_PROMPT, spawn: leadSpawn })).task;
    say(`lead task ${lead.id}`);

    const answered = new Set<string>();
    const answers: OperatorAnswer[] = [];

    /**
     * Every live session idle with nothing due, or held here; no task about to start. A
     * session (or ready task) that has not asked the model anything yet has told nobody
     * anything, so it holds back only the releases ranked after it (`next`): the order stays
     * fixed while claude processes start beside a turn.
     */
    const quiet = async (next?: Held): Promise<boolean> => {
      const mayStart = (title: string | null) =>
        next !== undefined && rank(title) > rank(TITLES[next.role as Letter]);
      const live = await w.store.reader
        .selectFrom('sessions')
        .select(['id', 'status', 'term_deadline', 'title'])
        .where('status', '!=', 'stopped')
        .where('depth', '>', 0)
        .execute();
      for (const s of live) {
        if (s.status === 'running' && held.some((h) => h.session === s.id)) continue;
        const asked = requests.some((r) => r.session === s.id);
        if ((s.status === 'pending' || s.status === 'running') && !asked && mayStart(s.title)) continue;
        if (s.status !== 'idle' || s.term_deadline !== null) return false;
        if (await w.kernel.hasPendingInput(s.id)) return false;
      }
      const ready: Array<{ title: string }> = (await call('task_list', { status: 'ready' })).tasks;
      return ready.every((t) => mayStart(t.title));
    };
    const settled = async (next?: Held): Promise<boolean> => {
      if (!(await quiet(next))) return false;
      const head = await w.store.log.head();
      await sleep(SETTLE_MS);
      return (await w.store.log.head()) === head && (await quiet(next));
    };

    let stuckSince: number | undefined;
    for (;;) {
      if (failure) throw failure;
      if (Date.now() > deadline)
        throw new Error(
          `the team did not finish in time; held: ${held.map((h) => h.role)}; sessions: ${JSON.stringify(
            await w.store.reader
              .selectFrom('sessions')
              .select(['title', 'status', 'term_deadline'])
              .execute(),
          )}; tasks: ${JSON.stringify((await call('task_list', {})).tasks.map((t: Any) => [t.title, t.status]))}`,
        );
      await sleep(50);
      held.sort((a, b) => rank(TITLES[a.role as Letter]) - rank(TITLES[b.role as Letter]) || a.at - b.at);
      const next = held[0];
      if (!(await settled(next))) {
        stuckSince = undefined;
        continue;
      }
      if (next) {
        stuckSince = undefined;
        held.shift();
        say(`release ${next.role} (${next.session})`);
        next.release();
        continue;
      }
      const escalations = (await logOf(w, 'task.escalated')).filter(
        (e) => !answered.has(String(e.payload.escalation)),
      );
      if (escalations.length > 0) {
        const id = String(escalations[0]!.payload.escalation);
        answered.add(id);
        stuckSince = undefined;
        const r = await cli(['inbox', 'answer', id, DECISION, '--url', url, '--data-dir', dataDir]);
        say(`operator: warren inbox answer ${id} → exit ${r.code} ${r.stdout.trim()} ${r.stderr.trim()}`);
        answers.push({ escalation: id, ...r });
        continue;
      }
      const status = (await call('task_show', { id: lead.id })).task.status;
      if (['complete', 'failed', 'cancelled'].includes(status)) break;
      // Quiet, nothing held, nothing to answer, the lead not done: nothing will ever happen.
      // End the run, so its assertions say what is missing rather than a timeout.
      stuckSince ??= Date.now();
      if (Date.now() - stuckSince > STUCK_MS) {
        say(`stuck: the lead's task is ${status} and nothing is left to happen`);
        break;
      }
    }

    const leadNow = (await call('task_show', { id: lead.id })).task;
    // A finished team's sessions end on their own; give them a moment to, then say who did not.
    const live = async () =>
      (
        await w.store.reader
          .selectFrom('sessions')
          .select('id')
          .where('status', '!=', 'stopped')
          .where('depth', '>', 0)
          .execute()
      ).map((s) => s.id);
    const endBy = Date.now() + END_MS;
    while ((await live()).length > 0 && Date.now() < endBy) await sleep(50);
    const liveAtEnd = await live();
    const events = await wholeLog(w);
    for (const r of mock.side) requests.push(record(r, {}, true));
    return {
      events,
      requests,
      answers,
      leadTask: lead.id,
      leadSession: leadNow.sessionId,
      leadStatus: leadNow.status,
      liveAtEnd,
      ms: Date.now() - t0,
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

function record(
  req: MessagesRequest,
  headers: import('node:http').IncomingHttpHeaders,
  side: boolean,
): ModelRequest {
  const first = req.messages.find((m) => m.role === 'user');
  return {
    role: roleOf(req),
    session: sessionOf(req),
    conversation: conversationOf(headers),
    chars: JSON.stringify(req).length,
    warrenToolChars: (req.tools ?? [])
      .filter((t) => t.name.startsWith('mcp__warren__'))
      .reduce((n, t) => n + JSON.stringify(t).length, 0),
    otherToolChars: (req.tools ?? [])
      .filter((t) => !t.name.startsWith('mcp__warren__'))
      .reduce((n, t) => n + JSON.stringify(t).length, 0),
    lastInput: lastInput(req),
    firstInput: first
      ? typeof first.content === 'string'
        ? first.content
        : JSON.stringify(first.content)
      : '',
    side,
  };
}

async function logOf(w: Warren, type: string): Promise<Ev[]> {
  return ((await w.call(op, 'events', { type, limit: 10_000 })) as { events: Ev[] }).events;
}

async function wholeLog(w: Warren): Promise<Ev[]> {
  const out: Ev[] = [];
  for (;;) {
    const page = (
      (await w.call(op, 'events', { after: out.at(-1)?.seq ?? 0, limit: 10_000 })) as { events: Ev[] }
    ).events;
    if (page.length === 0) return out;
    out.push(...page);
  }
}

// The CLI must not pick up a developer's own settings.
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_') && k !== 'COLUMNS'),
  );

/** `warren <args>` as a child process; its exit code and output. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [WARREN_BIN, ...args],
      { env: { ...cleanEnv(), ...binEnv() }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}
