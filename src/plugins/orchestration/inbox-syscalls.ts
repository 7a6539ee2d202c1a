import { z } from 'zod';
import * as s from '../../contract/schemas.ts';
import { defineSyscall, type SyscallContext } from '../../contract/syscall.ts';
import { answerEscalation } from './answer.ts';
import { escalate } from './escalations.ts';
import { DEFAULT_INBOX_PAGE, listInbox, showEscalation } from './inbox.ts';
import type { OrchestrationSelf } from './instance.ts';

/** Escalation to a human: agents ask with task_escalate, operators answer from the inbox. */

export const QUESTION_BYTES = 4 * 1024;
export const CONTEXT_BYTES = 16 * 1024;

const tables = (ctx: SyscallContext) => (ctx.self as OrchestrationSelf).tables;

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '');

const question = z
  .string()
  .min(1)
  .refine((v) => Buffer.byteLength(v) <= QUESTION_BYTES, {
    message: `a question is at most ${QUESTION_BYTES} bytes`,
  })
  .describe('What you need a human to decide or tell you');

const context = z
  .record(z.string(), z.unknown())
  .refine((v) => bytes(v) <= CONTEXT_BYTES, { message: `context is at most ${CONTEXT_BYTES} bytes of JSON` })
  .optional()
  .describe('What the operator needs to answer: what you tried, the options, links');

const escalationId = z.string().min(1).max(200).describe('An escalation id (esc_…)');

const status = z.enum(['open', 'answered', 'withdrawn']);

const item = z.object({
  id: z.string(),
  task: z.string(),
  taskTitle: z.string().nullable(),
  session: z.string().nullable().describe('The session that asked; null when a failure escalated'),
  question: z.string(),
  status,
  createdAt: z.number(),
  ageMs: z.number(),
  answeredBy: z.string().nullable(),
  answeredAt: z.number().nullable(),
});

export const taskEscalate = defineSyscall({
  name: 'task_escalate',
  group: 'tasks',
  summary: 'Ask a human: open an escalation of your task in the operator inbox',
  description:
    'For the session of a task. The question (and optional context) appears in the operator inbox and your task waits (status waiting) until an operator answers: ending your turn, or even your session, does not complete it, and your dependents wait too. The answer arrives as input framed [ANSWER] (your session is resumed for it if it ended). Do not wait in a loop: end your turn, or carry on with other work.',
  input: z.object({ question, context }),
  output: z.object({ escalation: z.string(), task: z.string(), message: z.string() }),
  callers: ['session'],
  jobs: ['worker', 'orchestrator'],
  http: { method: 'POST', path: '/v1/inbox' },
  handler: async (ctx, i) => ({
    ...(await escalate(ctx.kernel, tables(ctx), ctx.principal, i.question, i.context ?? {})),
    message: 'Escalated to an operator; the answer will arrive as input framed [ANSWER].',
  }),
});

export const inboxList = defineSyscall({
  name: 'inbox_list',
  group: 'inbox',
  summary: "The operator inbox: your zone's open escalations (all=true: answered ones too)",
  description: `Open escalations, oldest first, each with its context and answer; all=true includes answered ones. Paged (default ${DEFAULT_INBOX_PAGE}).`,
  input: z.object({ all: s.optionalFlag.describe('Answered ones too'), ...s.pageInput }),
  output: z.object({
    escalations: z.array(
      item.extend({
        context: z
          .record(z.string(), z.unknown())
          .describe('What the agent gave to answer it: files, options'),
        answer: z.string().nullable(),
      }),
    ),
    next: s.nextCursor,
  }),
  callers: ['operator'],
  jobs: ['operator'],
  http: { method: 'GET', path: '/v1/inbox' },
  cli: { command: ['inbox'], examples: ['warren inbox', 'warren inbox --all --limit 20'] },
  handler: (ctx, i) => listInbox(ctx.kernel, tables(ctx), ctx.principal, i),
});

export const inboxShow = defineSyscall({
  name: 'inbox_show',
  group: 'inbox',
  summary: 'One escalation: its task, question, context and answer',
  input: z.object({ id: escalationId }),
  output: z.object({
    escalation: item.extend({
      context: z.record(z.string(), z.unknown()),
      answer: z.string().nullable(),
      taskStatus: z.string().nullable(),
      taskSession: z.string().nullable(),
    }),
  }),
  callers: ['operator'],
  jobs: ['operator'],
  http: { method: 'GET', path: '/v1/inbox/:id' },
  cli: { command: ['inbox', 'show'], positional: ['id'], examples: ['warren inbox show esc_01j…'] },
  handler: async (ctx, i) => ({
    escalation: await showEscalation(ctx.kernel, tables(ctx), ctx.principal, i.id),
  }),
});

export const inboxAnswer = defineSyscall({
  name: 'inbox_answer',
  group: 'inbox',
  summary: "Answer an escalation: delivered to the task's live session, or the task is retried with it",
  description:
    'Marks it answered and logs escalation.answered; a task waiting on it runs again. A live session of the task gets the answer as input ([ANSWER] with the question), one that stopped cleanly is resumed for it; when its session cannot come back the task is retried with the answer added to its prompt; a task not dispatched yet gets it in its prompt; a complete or cancelled task only has it recorded. Answering twice is already_answered.',
  input: z.object({ id: escalationId, text: z.string().min(1).describe('The answer') }),
  output: z.object({
    escalation: z.string(),
    task: z.string(),
    delivered: z.enum(['input', 'retry', 'prompt', 'none']),
    session: z.string().nullable(),
  }),
  callers: ['operator'],
  jobs: ['operator'],
  http: { method: 'POST', path: '/v1/inbox/:id/answer' },
  cli: {
    command: ['inbox', 'answer'],
    positional: ['id', 'text'],
    examples: ['warren inbox answer esc_01j… "use the staging database"'],
  },
  handler: (ctx, i) => answerEscalation(ctx.kernel, tables(ctx), ctx.principal, i.id, i.text),
});

export const inboxSyscalls = [taskEscalate, inboxList, inboxShow, inboxAnswer];
