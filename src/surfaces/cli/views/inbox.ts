import { renderKeyValues, renderTable } from '../table.ts';
import { compactJson, iso, text, type View, view } from './format.ts';

/** The operator inbox: escalations from agents and failing tasks. */

interface Item {
  id: string;
  task: string;
  taskTitle: string | null;
  session: string | null;
  question: string;
  status: string;
  createdAt: number;
  ageMs: number;
  answeredBy: string | null;
  answeredAt: number | null;
}

/** 42s, 5m, 3h, 2d: how long it has waited, at a glance. */
export const age = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
};

const list = view<{ escalations: Item[]; next: string | null }>((out, ctx) => {
  const anyClosed = out.escalations.some((e) => e.status !== 'open');
  const table = renderTable(
    ['ID', 'Task', 'Title', 'Question', 'Age', 'Session', ...(anyClosed ? ['Status'] : [])],
    out.escalations.map((e) => [
      e.id,
      e.task,
      e.taskTitle ?? '',
      e.question,
      age(e.ageMs),
      e.session ?? '(task failed)',
      ...(anyClosed ? [e.status === 'answered' ? `answered by ${e.answeredBy ?? '?'}` : e.status] : []),
    ]),
    { ...ctx, empty: 'inbox empty: no open escalations' },
  );
  return out.next ? `${table}more: --after ${out.next}\n` : table;
});

const show = view<{
  escalation: Item & {
    context: Record<string, unknown>;
    answer: string | null;
    taskStatus: string | null;
    taskSession: string | null;
  };
}>((out, ctx) => {
  const e = out.escalation;
  return renderKeyValues(
    [
      ['id', e.id],
      ['status', e.status],
      [
        'task',
        `${e.task}${e.taskTitle ? ` "${e.taskTitle}"` : ''}${e.taskStatus ? ` (${e.taskStatus})` : ''}`,
      ],
      ['asked by', e.session ?? '(the task failed)'],
      ['task session', text(e.taskSession)],
      ['asked', `${iso(e.createdAt)} (${age(e.ageMs)} ago)`],
      ['question', e.question],
      ['context', compactJson(e.context)],
      ['answer', text(e.answer)],
      ['answered by', text(e.answeredBy)],
      ['answered', iso(e.answeredAt)],
    ],
    ctx.width ? { width: ctx.width } : {},
  );
});

const HOW: Record<string, string> = {
  input: 'delivered to session',
  retry: 'its session is gone: task retried with the answer in its prompt',
  prompt: 'task not dispatched yet: the answer is in its prompt',
  none: 'task is closed: answer recorded only',
};

const answer = view<{ escalation: string; task: string; delivered: string; session: string | null }>(
  (out) =>
    `answered ${out.escalation} (task ${out.task}); ${HOW[out.delivered] ?? out.delivered}${out.session ? ` ${out.session}` : ''}\n`,
);

export const inboxViews: Record<string, View> = {
  inbox_list: list,
  inbox_show: show,
  inbox_answer: answer,
};
