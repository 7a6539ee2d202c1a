import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';
import { notFound, WarrenError } from '../../vocab/errors.ts';
import { principalId } from '../../vocab/principal.ts';
import {
  allowMutation,
  evidencePaths,
  namespace,
  nsOf,
  ownSessionOnly,
  questionId,
  questionOut,
  reportOut,
  sessionId,
  turnId,
  turnsOf,
} from './common.ts';
import { bridgeSession, deliver, endTurn, turnOf } from './ops.ts';
import { requireMutation, requireSafeId } from './policy.ts';
import { questionRecord, reportRecord } from './records.ts';
import type { QuestionsTable, ReportsTable } from './schema.ts';

/** Questions an agent asks its coordinator, and the reports either side writes. */

const MAX_TEXT = 16 * 1024;
const text = (what: string) =>
  z
    .string()
    .min(1)
    .refine((t) => Buffer.byteLength(t) <= MAX_TEXT, `at most ${MAX_TEXT} bytes`)
    .describe(what);

export const bridgeAskQuestion = defineSyscall({
  name: 'bridge_ask_question',
  group: 'turns',
  summary: 'Ask your coordinator a structured question (options or free form); the answer arrives as input',
  input: z.object({
    text: text('The question'),
    options: z
      .array(z.string().min(1).max(512))
      .min(2)
      .max(20)
      .optional()
      .describe('Choices; absent: free form'),
    turn_id: turnId.optional().describe('The turn it belongs to (default: your active turn)'),
  }),
  output: z.object({ question: questionOut }),
  callers: ['session'],
  handler: async (ctx, i) => {
    const { kernel, principal } = ctx;
    const sid = principal.kind === 'session' ? principal.sessionId : '';
    const row = await turnsOf(ctx).tables.write(async (tx) => {
      const s = await tx.db
        .selectFrom('turns_sessions')
        .selectAll()
        .where('session_id', '=', sid)
        .executeTakeFirst();
      if (!s) throw notFound('coordinator session', sid);
      let turn: string | null = null;
      if (i.turn_id !== undefined) {
        requireSafeId('turn_id', i.turn_id);
        const t = await tx.db
          .selectFrom('turns')
          .select(['id', 'session_id'])
          .where('id', '=', i.turn_id)
          .executeTakeFirst();
        if (!t || t.session_id !== sid) throw notFound('turn', i.turn_id);
        turn = t.id;
      } else {
        const t = await tx.db
          .selectFrom('turns')
          .select('id')
          .where('session_id', '=', sid)
          .where('status', '=', 'active')
          .executeTakeFirst();
        turn = t?.id ?? null;
      }
      const q: QuestionsTable = {
        id: kernel.ids.id('quest'),
        zone: s.zone,
        session_id: sid,
        turn_id: turn,
        text: i.text,
        options: i.options ? JSON.stringify(i.options) : null,
        status: 'open',
        answer: null,
        answered_by: null,
        created_at: tx.now,
        answered_at: null,
      };
      await tx.db.insertInto('turns_questions').values(q).execute();
      tx.append({
        zone: s.zone,
        type: 'question.asked',
        actor: sid,
        session_id: sid,
        payload: {
          question_id: q.id,
          turn_id: turn,
          ref: `question:${q.id}`,
          options: i.options?.length ?? 0,
        },
      });
      return q;
    });
    return { question: questionRecord(row) };
  },
});

export const bridgeListQuestions = defineSyscall({
  name: 'bridge_list_questions',
  group: 'turns',
  summary: 'Questions of coordinator sessions (open ones by default), oldest first',
  input: z.object({
    session_id: sessionId.optional(),
    status: z.enum(['open', 'answered', 'all']).optional().describe('Only these in this status'),
    limit: z.coerce.number().int().min(1).max(100).optional().describe('Max items'),
    ...namespace,
  }),
  output: z.object({ questions: z.array(questionOut) }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/questions' },
  cli: { command: ['coordinator', 'questions'], examples: ['warren coordinator questions --status all'] },
  handler: async (ctx, i) => {
    const ns = nsOf(ctx, i);
    let q = turnsOf(ctx)
      .tables.reader.selectFrom('turns_questions')
      .innerJoin('turns_sessions', 'turns_sessions.session_id', 'turns_questions.session_id')
      .selectAll('turns_questions')
      .where('turns_questions.zone', '=', ctx.principal.zone)
      .where('turns_sessions.profile', '=', ns.profile)
      .where('turns_sessions.repo', '=', ns.repo);
    if (i.session_id !== undefined)
      q = q.where('turns_questions.session_id', '=', requireSafeId('session_id', i.session_id));
    const status = i.status ?? 'open';
    if (status !== 'all') q = q.where('turns_questions.status', '=', status);
    const rows = await q
      .orderBy('turns_questions.id')
      .limit(i.limit ?? 100)
      .execute();
    return { questions: rows.map(questionRecord) };
  },
});

export const bridgeAnswerQuestion = defineSyscall({
  name: 'bridge_answer_question',
  group: 'turns',
  summary: 'Answer an open question: delivered to its session as input, and the question closes',
  description: 'Answering twice is already_answered. Mutation class: questions.',
  input: z.object({
    question_id: questionId,
    answer: text('The answer (one of the options, or free text)'),
    session_id: sessionId.optional(),
    allow_mutation: allowMutation,
    ...namespace,
  }),
  output: z.object({ question: questionOut }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/bridge/questions/:question_id/answer' },
  handler: async (ctx, i) => {
    requireMutation(turnsOf(ctx).policy, 'questions', i.allow_mutation);
    const ns = nsOf(ctx, i);
    requireSafeId('question_id', i.question_id);
    const { kernel, principal } = ctx;
    const row = await turnsOf(ctx).tables.write(async (tx) => {
      const q = await tx.db
        .selectFrom('turns_questions')
        .selectAll()
        .where('id', '=', i.question_id)
        .executeTakeFirst();
      if (!q || q.zone !== principal.zone || (i.session_id !== undefined && q.session_id !== i.session_id)) {
        throw notFound('question', i.question_id);
      }
      const s = await bridgeSession(tx.db, principal.zone, ns, q.session_id);
      if (q.status !== 'open') {
        throw new WarrenError(
          'already_answered',
          `question ${q.id} was already answered by ${q.answered_by}`,
        );
      }
      const opts = q.options === null ? null : (JSON.parse(q.options) as string[]);
      if (opts && !opts.includes(i.answer)) {
        throw new WarrenError('invalid_input', `answer must be one of: ${opts.join(', ')}`);
      }
      const by = principalId(principal);
      await tx.db
        .updateTable('turns_questions')
        .set({ status: 'answered', answer: i.answer, answered_by: by, answered_at: tx.now })
        .where('id', '=', q.id)
        .execute();
      await deliver(tx, kernel, principal, s, `[ANSWER ${q.id}] ${i.answer}`);
      tx.append({
        zone: q.zone,
        type: 'question.answered',
        actor: by,
        session_id: q.session_id,
        payload: { question_id: q.id, turn_id: q.turn_id, ref: `question:${q.id}` },
      });
      return { ...q, status: 'answered' as const, answer: i.answer, answered_by: by, answered_at: tx.now };
    });
    return { question: questionRecord(row) };
  },
});

const REPORT_STATUSES = ['in_progress', 'blocked', 'completed', 'failed', 'cancelled'] as const;

export const bridgeReportStatus = defineSyscall({
  name: 'bridge_report_status',
  group: 'turns',
  summary: 'Write a coordination report for a session (and turn); completed/failed/cancelled end the turn',
  description:
    'A report is durable (status, summary, blocker, evidence paths). With status completed, failed or cancelled it also ends the turn (default: the session’s active one) with the summary as its final response; cancelled records the coordinator’s cancellation and does not kill the process. A session reports on itself; an operator needs mutation class reports and allow_mutation.',
  input: z.object({
    session_id: sessionId,
    turn_id: turnId.optional(),
    status: z.enum(REPORT_STATUSES).describe('Only these in this status'),
    summary: text('What happened'),
    blocker: z.string().max(4096).optional().describe('What blocks it (with status blocked or failed)'),
    evidence: evidencePaths.optional().describe('Paths (under the working directory) that show it'),
    allow_mutation: allowMutation,
    ...namespace,
  }),
  output: z.object({ report: reportOut, turn_ended: z.boolean() }),
  callers: ['operator', 'session'],
  http: { method: 'POST', path: '/v1/bridge/sessions/:session_id/reports' },
  handler: async (ctx, i) => {
    const { kernel, principal } = ctx;
    const t = turnsOf(ctx);
    ownSessionOnly(principal, i.session_id);
    if (principal.kind === 'operator') requireMutation(t.policy, 'reports', i.allow_mutation);
    const ns = principal.kind === 'operator' ? nsOf(ctx, i) : undefined;
    const by = principalId(principal);
    const report = await t.tables.write(async (tx) => {
      const s = ns
        ? await bridgeSession(tx.db, principal.zone, ns, i.session_id)
        : await tx.db
            .selectFrom('turns_sessions')
            .selectAll()
            .where('session_id', '=', i.session_id)
            .executeTakeFirst();
      if (!s) throw notFound('coordinator session', i.session_id);
      let turn: string | null = null;
      if (i.turn_id !== undefined) {
        turn = (await turnOf(tx.db, s.zone, s, i.turn_id, s.session_id)).id;
      } else {
        const a = await tx.db
          .selectFrom('turns')
          .select('id')
          .where('session_id', '=', s.session_id)
          .where('status', '=', 'active')
          .executeTakeFirst();
        turn = a?.id ?? null;
      }
      const r: ReportsTable = {
        id: kernel.ids.id('rep'),
        zone: s.zone,
        session_id: s.session_id,
        turn_id: turn,
        status: i.status,
        summary: i.summary,
        blocker: i.blocker ?? null,
        evidence: JSON.stringify(i.evidence ?? []),
        created_by: by,
        created_at: tx.now,
      };
      await tx.db.insertInto('turns_reports').values(r).execute();
      tx.append({
        zone: s.zone,
        type: 'report.written',
        actor: by,
        session_id: s.session_id,
        payload: { report_id: r.id, turn_id: turn, status: i.status, ref: `report:${r.id}` },
      });
      return r;
    });
    let ended = false;
    if (report.turn_id && (i.status === 'completed' || i.status === 'failed' || i.status === 'cancelled')) {
      const r = await endTurn(kernel, t.tables, t.policy, by, report.turn_id, {
        status: i.status,
        text: i.summary,
        source: 'report_status',
        blocker: i.blocker ?? null,
        error: i.status === 'failed' ? (i.blocker ?? i.summary) : null,
        evidence: i.evidence ?? [],
      });
      ended = r.ended;
      if (ended) t.engine.forget(report.turn_id);
      if (r.promoted) t.engine.watch(r.promoted.id, r.promoted.zone, r.promoted.session_id);
    }
    return { report: reportRecord(report), turn_ended: ended };
  },
});

export const qaSyscalls = [bridgeAskQuestion, bridgeListQuestions, bridgeAnswerQuestion, bridgeReportStatus];
