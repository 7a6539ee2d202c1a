import type { TaskInfo, taskDetail } from '../../../plugins/orchestration/tasks.ts';
import { renderKeyValues, renderTable } from '../table.ts';
import { compactJson, iso, list, type Session, text, type View, view } from './format.ts';
import { sessionDetails } from './sessions.ts';

/** Tasks (the orchestration plugin): list, show, tree. */

/** A task as the syscalls give it: always its info, in full (`task show`) its prompt, spawn and budget too. */
type Task = TaskInfo & Partial<Pick<ReturnType<typeof taskDetail>, 'prompt' | 'spawn' | 'budget'>>;
/** The tree's nodes (views.ts TreeNode, with the task as above). */
interface Node {
  task: Task;
  children: Node[];
}

const clip = (t: string, n: number) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);
const statusOf = (t: Task) => `${t.status}${t.held ? ' (held)' : ''}`;
/** What a row says beside its status: why it waits or failed, else its result. */
const noteOf = (t: Task) => clip(t.reason ?? t.result ?? '', 80);

const taskList = view<{ tasks: Task[]; next: string | null }>((out, ctx) => {
  const table = renderTable(
    ['ID', 'Title', 'Status', 'Parent', 'Session', 'Attempts', 'Reason/Result'],
    out.tasks.map((t) => [
      t.id,
      t.title,
      statusOf(t),
      t.parentId ?? '',
      t.sessionId ?? '',
      String(t.attempts),
      noteOf(t),
    ]),
    { ...ctx, empty: 'no tasks' },
  );
  return out.next ? `${table}next page: --after ${out.next}\n` : table;
});

const taskDetails = (t: Task, width?: number): string =>
  renderKeyValues(
    [
      ['id', t.id],
      ['title', t.title],
      ['status', statusOf(t)],
      ['reason', text(t.reason)],
      ['result', text(t.result)],
      ['parent', text(t.parentId)],
      ['session', text(t.sessionId)],
      ['attempts', String(t.attempts)],
      ['review', t.review ? 'yes' : 'no'],
      ['on failure', t.onFailure],
      ['persona', text(t.personaId)],
      ['environment', t.environment],
      ['spawn', compactJson(t.spawn)],
      ['budget', compactJson(t.budget ?? undefined)],
      ['created by', t.createdBy],
      ['created', iso(t.createdAt)],
      ['updated', iso(t.updatedAt)],
      ['ended', iso(t.endedAt)],
      ['prompt', text(t.prompt)],
    ],
    width ? { width } : {},
  );

const taskShow = view<{ task: Task; dependsOn: string[]; children: string[]; session: Session | null }>(
  (out, ctx) =>
    `${taskDetails(out.task, ctx.width)}${renderKeyValues(
      [
        ['depends on', list(out.dependsOn)],
        ['children', list(out.children)],
      ],
      ctx.width ? { width: ctx.width } : {},
    )}${out.session ? `\nsession\n${sessionDetails(out.session, ctx.width)}` : ''}`,
);

const taskOne = view<{ task: Task }>((out, ctx) => taskDetails(out.task, ctx.width));

/** The tree, one task a line, indented under its parent. */
const taskTree = view<{ tree: Node; truncated: boolean }>((out) => {
  const lines: string[] = [];
  const walk = (n: Node, prefix: string, last: boolean, top: boolean) => {
    const t = n.task;
    const note = noteOf(t);
    lines.push(
      `${top ? '' : `${prefix}${last ? '└─ ' : '├─ '}`}${t.id}  ${t.title}  [${statusOf(t)}]${note ? `  ${note}` : ''}`,
    );
    const inner = top ? '' : `${prefix}${last ? '   ' : '│  '}`;
    for (const [i, c] of n.children.entries()) walk(c, inner, i === n.children.length - 1, false);
  };
  walk(out.tree, '', true, true);
  if (out.truncated) lines.push('… (truncated)');
  return `${lines.join('\n')}\n`;
});

export const taskViews: Record<string, View> = {
  task_list: taskList,
  task_show: taskShow,
  task_tree: taskTree,
  task_create: taskOne,
  task_depend: taskOne,
  task_start: taskOne,
  task_complete: taskOne,
};
