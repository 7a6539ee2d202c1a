/**
 * The team's model, scripted: a lead that builds a four-task DAG and claude-code workers that
 * do the tasks, one asking the operator (task_escalate), one failing its first attempt. Every
 * turn is decided from the request itself — who is asking (the prompt), what it was just told
 * (the last user input), which tools it is offered — never from how many requests came
 * before, so the script survives changes to tool lists, signal lines and turn counts. The one
 * memory is which CLI conversation already failed task A (a retry is a new conversation).
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  allToolResults,
  conversationText,
  firstUserText,
  lastUserText,
  type MessagesRequest,
  type ToolResult,
  type Turn,
  textOf,
  toolNames,
  toolResults,
} from '../helpers/mock-anthropic.ts';

export const LETTERS = ['A', 'B', 'C', 'D'] as const;
export type Letter = (typeof LETTERS)[number];
export type Role = 'lead' | Letter;

export const TITLES: Record<Letter, string> = {
  A: 'A: release notes',
  B: 'B: choose the database',
  C: 'C: migrate the service',
  D: 'D: deploy the service',
};
const PROMPTS: Record<Letter, string> = {
  A: 'team task A: write the release notes.',
  B: 'team task B: choose the database the service moves to. Ask the operator which one.',
  C: 'team task C: migrate the service to the database chosen in B.',
  D: 'team task D: deploy the service on its new database.',
};
export const LEAD_PROMPT =
  'team lead: ship the release as four tasks done by claude-code workers. A and B are independent, C needs A and B, D needs C. Retry a task that fails once. When D is done, say TEAM DONE.';
export const QUESTION = 'Which database should the service move to?';
/** What the operator answers; its presence in a request proves the decision reached it. */
export const DECISION = 'PostgreSQL 16, schema v2';
export const DONE = 'TEAM DONE: A, B, C and D are complete.';

const TOOL = (name: string) => `mcp__warren__${name}`;

/** Who sent a request: the lead or the worker of a task, from its prompt. */
export function roleOf(req: MessagesRequest): Role | null {
  const first = firstUserText(req);
  if (first.includes('team lead:')) return 'lead';
  const m = /team task ([ABCD]):/.exec(first);
  return m ? (m[1] as Letter) : null;
}

/** The warren session a request comes from (claude-code's note names it in the system prompt). */
export function sessionOf(req: MessagesRequest): string | null {
  const system =
    typeof req.system === 'string' ? req.system : (req.system ?? []).map((b) => b.text).join('\n');
  return /\b(ses_[0-9a-z]+)\b/i.exec(system)?.[1] ?? null;
}

/** The CLI's own conversation id (one per `claude` process). */
export const conversationOf = (headers: IncomingHttpHeaders): string =>
  String(headers['x-claude-code-session-id'] ?? '');

/** The text a model request was sent in reply to: the last user input, tool results included. */
export function lastInput(req: MessagesRequest): string {
  const results = toolResults(req);
  return [lastUserText(req), ...results.map((r) => r.text)].filter(Boolean).join('\n');
}

/** The spawn every worker gets: the real CLI against this mock, in a home of its own. */
export interface WorkerSpawn {
  runtime: 'claude-code';
  cwd: string;
  env: Record<string, string>;
}

export interface TeamMemory {
  /** The CLI conversation whose first request failed task A. */
  failedA?: string;
}

/** One report to the lead, from a `[TASK]` line or (before issue 24) a `[SIGCHLD]` line. */
export interface Report {
  letter: Letter;
  /** complete | failed | cancelled | waiting, or for SIGCHLD: idle | stopped | failed. */
  outcome: string;
  line: string;
}

const byTitle = new Map(LETTERS.map((l) => [TITLES[l], l] as const));

/** The task reports in a text: `[TASK] <id> "<title>" <status>: …` or `[SIGCHLD] Child <id> "<title>" is …`. */
export function reportsIn(text: string): Report[] {
  const out: Report[] = [];
  for (const line of text.split('\n')) {
    const m = /\[(TASK|SIGCHLD)\][^"\n]*"([^"\n]*)"\s*([^\n]*)/.exec(line);
    const letter = m ? byTitle.get(m[2]!) : undefined;
    if (!m || !letter) continue;
    const tail = m[3]!;
    let outcome: string;
    if (m[1] === 'TASK') outcome = /^(\w+)/.exec(tail)?.[1] ?? tail;
    else if (/^is idle/.test(tail)) outcome = 'idle';
    // A task's session stopped after its SIGTERM (`terminated`) had finished its task.
    else if (/^is stopped \((crashed|killed|expired|budget_exceeded)/.test(tail)) outcome = 'failed';
    else if (/^is stopped/.test(tail)) outcome = 'stopped';
    else outcome = tail;
    out.push({ letter, outcome, line });
  }
  return out;
}

/** The first of `names` that a tool's input schema has (tool schemas differ between versions). */
function fieldOf(req: MessagesRequest, tool: string, names: string[]): string {
  const schema = (req.tools ?? []).find((t) => t.name === tool)?.input_schema as
    | { properties?: Record<string, unknown> }
    | undefined;
  const props = Object.keys(schema?.properties ?? {});
  return names.find((k) => props.includes(k)) ?? names[0]!;
}

/** The decision the operator gave, wherever this conversation heard it. */
export function decisionIn(text: string): string | null {
  return (
    /\[ANSWER\][\s\S]*?Answer: ([^\n]*)/.exec(text)?.[1]?.trim() ??
    /Operator's answer to your escalation[^:]*: ([^\n]*)/.exec(text)?.[1]?.trim() ??
    null
  );
}

/** Did this conversation call `tool`? */
const called = (results: ToolResult[], tool: string) => results.some((r) => r.name === TOOL(tool));

// ---------------------------------------------------------------- the lead

function leadTurn(req: MessagesRequest, spawn: WorkerSpawn): Turn {
  const input = lastInput(req);
  if (input.includes('[SIGTERM]')) return { text: 'Stopping.' };
  const results = allToolResults(req);
  const made = new Map<Letter, string>();
  for (const r of results.filter((r) => r.name === TOOL('task_create'))) {
    const letter = byTitle.get(String((r.input as { title?: string }).title));
    const id = /"id"\s*:\s*"(task_[0-9a-z]+)"/i.exec(r.text)?.[1];
    if (letter && id) made.set(letter, id);
  }
  const create = (l: Letter, dependsOn: string[] = []) => ({
    name: TOOL('task_create'),
    input: { title: TITLES[l], prompt: PROMPTS[l], ...(dependsOn.length ? { dependsOn } : {}), spawn },
  });
  if (!made.has('A') || !made.has('B'))
    return { text: 'Splitting the release into four tasks.', toolUses: [create('A'), create('B')] };
  if (!made.has('C')) return { toolUses: [create('C', [made.get('A')!, made.get('B')!])] };
  if (!made.has('D')) return { toolUses: [create('D', [made.get('C')!])] };

  // Woken by its tasks: everything it was told so far, and what it did about it.
  const heard = req.messages.filter((m) => m.role === 'user').flatMap((m) => reportsIn(textOf(m)));
  const now = reportsIn(lastUserText(req));
  if (now.some((r) => r.letter === 'D' && ['complete', 'idle', 'stopped'].includes(r.outcome)))
    return { text: DONE };
  const retry = toolNames(req).includes(TOOL('task_retry')) ? TOOL('task_retry') : TOOL('task_start');
  for (const l of LETTERS) {
    const failures = heard.filter((r) => r.letter === l && r.outcome === 'failed').length;
    const retries = results.filter(
      (r) => r.name === retry && Object.values(r.input as object).includes(made.get(l)),
    ).length;
    if (failures > retries && now.some((r) => r.letter === l && r.outcome === 'failed'))
      return {
        text: `Task ${l} failed; retrying it.`,
        toolUses: [{ name: retry, input: { [fieldOf(req, retry, ['id', 'task', 'taskId'])]: made.get(l)! } }],
      };
  }
  return { text: 'Waiting for my tasks.' };
}

// ---------------------------------------------------------------- the workers

function workerTurn(letter: Letter, req: MessagesRequest, conversation: string, memory: TeamMemory): Turn {
  const input = lastInput(req);
  if (input.includes('[SIGTERM]')) return { text: 'Stopping: my task is done.' };
  const tools = toolNames(req);
  const results = allToolResults(req);
  const everything = conversationText(req);
  switch (letter) {
    case 'A': {
      if (memory.failedA === undefined) {
        memory.failedA = conversation;
        if (tools.includes(TOOL('task_fail')))
          return {
            toolUses: [
              {
                name: TOOL('task_fail'),
                input: {
                  [fieldOf(req, TOOL('task_fail'), ['reason', 'error', 'message'])]:
                    'the release notes generator crashed',
                },
              },
            ],
          };
        return {
          error: {
            status: 400,
            type: 'invalid_request_error',
            message: 'team bench: the first attempt of task A fails',
          },
        };
      }
      if (memory.failedA === conversation) return { text: 'Failed: the release notes generator crashed.' };
      return { text: 'A done: release notes written.' };
    }
    case 'B': {
      const decision = decisionIn(everything);
      if (decision) {
        if (tools.includes(TOOL('knowledge_post')) && !called(results, 'knowledge_post'))
          return {
            toolUses: [
              {
                name: TOOL('knowledge_post'),
                input: {
                  title: 'Decision: the database of the service',
                  body: `The operator decided the database: ${decision}`,
                  tags: ['decision'],
                },
              },
            ],
          };
        return { text: `B done: the operator decided the database: ${decision}` };
      }
      if (!tools.includes(TOOL('task_escalate')))
        throw new Error(`worker B is not offered task_escalate (tools: ${tools.join(', ')})`);
      if (!called(results, 'task_escalate'))
        return { toolUses: [{ name: TOOL('task_escalate'), input: { question: QUESTION } }] };
      return { text: 'I asked the operator which database to use and wait for the answer.' };
    }
    default: {
      const seen = firstUserText(req).includes(DECISION);
      return { text: `${letter} done${seen ? ` on ${DECISION}` : ''}.` };
    }
  }
}

/** One turn of the team's model. */
export function teamTurn(
  req: MessagesRequest,
  headers: IncomingHttpHeaders,
  spawn: WorkerSpawn,
  memory: TeamMemory,
): Turn {
  const role = roleOf(req);
  if (role === 'lead') return leadTurn(req, spawn);
  if (role) return workerTurn(role, req, conversationOf(headers), memory);
  throw new Error(`a request from nobody in the team: ${firstUserText(req).slice(0, 200)}`);
}
