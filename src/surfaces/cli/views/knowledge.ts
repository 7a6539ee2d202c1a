import type { FindingInfo } from '../../../plugins/knowledge/findings.ts';
import { renderKeyValues, renderTable } from '../table.ts';
import { iso, text, type View, view } from './format.ts';

/**
 * Findings and workpads (the knowledge plugin): a table for a search, `key  value` details
 * for one, times as ISO 8601 instead of epoch milliseconds. `--json` gives the output as it is.
 */

/** A finding as the plugin answers it; a search adds its score. */
type Finding = FindingInfo & { score?: number | null };

interface Workpad {
  task: string;
  body: string;
  version: number;
  updatedBy: string | null;
  updatedAt: number | null;
}

const search = view<{ findings: Finding[]; terms: string[] }>((out, ctx) =>
  renderTable(
    ['ID', 'Title', 'Tags', 'Task', 'Created', 'Score', 'Body'],
    out.findings.map((f) => [
      f.id,
      f.title,
      f.tags.join(', '),
      text(f.task),
      iso(f.createdAt),
      typeof f.score === 'number' ? f.score.toFixed(3) : '',
      f.body,
    ]),
    { ...ctx, empty: out.terms.length ? `no findings match: ${out.terms.join(' ')}` : 'no findings' },
  ),
);

/** The fields, then the body whole below them (it is the point of a finding). */
const finding = view<{ finding: Finding }>((out, ctx) => {
  const f = out.finding;
  return `${renderKeyValues(
    [
      ['id', f.id],
      ['title', f.title],
      ['tags', f.tags.join(', ')],
      ['task', text(f.task)],
      ['session', text(f.session)],
      ['created by', f.createdBy],
      ['created', iso(f.createdAt)],
    ],
    ctx.width ? { width: ctx.width } : {},
  )}\n${f.body.endsWith('\n') ? f.body : `${f.body}\n`}`;
});

const workpad = view<{ workpad: Workpad }>((out, ctx) => {
  const w = out.workpad;
  return `${renderKeyValues(
    [
      ['task', w.task],
      ['version', String(w.version)],
      ['updated by', w.updatedBy ?? 'never written'],
      ['updated', iso(w.updatedAt)],
    ],
    ctx.width ? { width: ctx.width } : {},
  )}${w.body ? `\n${w.body.endsWith('\n') ? w.body : `${w.body}\n`}` : ''}`;
});

export const knowledgeViews: Record<string, View> = {
  knowledge_search: search,
  knowledge_show: finding,
  knowledge_post: finding,
  workpad_read: workpad,
  workpad_write: workpad,
};
