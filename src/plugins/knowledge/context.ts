import type { StartContextPart, StartContextTask } from '../../contract/plugin.ts';
import type { TaskDirectory } from '../orchestration/directory.ts';
import type { KnowledgeConfig } from './config.ts';
import { findingsOfTasks } from './findings.ts';
import { termsOf } from './query.ts';
import type { Tables } from './schema.ts';
import type { FindingRow, FindingSearch } from './search.ts';
import { workpadOf } from './workpads.ts';

/** Findings read per group (dependencies, ancestors) before the budget picks. */
const PER_GROUP = 50;
/** How far up the task tree ancestors are read. */
const MAX_ANCESTORS = 100;

const HEAD = '<warren-context source="knowledge">';
const TAIL = '</warren-context>';

/**
 * The start context of a task's session: its workpad, the findings of its dependencies and
 * ancestors (newest first), then the top search hits for its title and prompt — in that
 * order, each whole or not at all, until `contextBytes` is spent (a workpad longer than half
 * the budget is cut). Null when there is nothing to say.
 */
export async function assemble(
  tables: Tables,
  tasks: TaskDirectory,
  search: FindingSearch,
  cfg: KnowledgeConfig,
  task: StartContextTask,
): Promise<StartContextPart | null> {
  if (cfg.contextBytes === 0) return null;
  const budget = new Budget(cfg.contextBytes - bytes(HEAD) - bytes(TAIL) - 8);
  const ref: { workpad: number | null; findings: string[]; truncated: boolean } = {
    workpad: null,
    findings: [],
    truncated: false,
  };
  const out: string[] = [];

  const pad = await workpadOf(tables, task.id);
  if (pad && pad.body !== '') {
    const head = `## Workpad of this task (version ${pad.version})\n`;
    const room = Math.floor(budget.left / 2) - bytes(head);
    if (room > 0) {
      const body = `${cut(pad.body, room - 1)}\n`;
      if (body !== `${pad.body}\n`) ref.truncated = true;
      budget.take(head + body);
      out.push(head + body);
      ref.workpad = Number(pad.version);
    }
  }

  const seen = new Set<string>();
  const section = (title: string, rows: FindingRow[]) => {
    const items: string[] = [];
    const head = `## ${title}\n`;
    for (const r of rows) {
      if (seen.has(r.id)) continue;
      const text = render(r);
      if (!budget.fits(text + (items.length === 0 ? head : ''))) {
        ref.truncated = true;
        continue;
      }
      if (items.length === 0) budget.take(head);
      budget.take(text);
      items.push(text);
      seen.add(r.id);
      ref.findings.push(r.id);
    }
    if (items.length > 0) out.push(head + items.join(''));
  };

  const deps = await tasks.dependencies(task.id);
  section(
    'Findings of the tasks this one depends on',
    await findingsOfTasks(tables, task.zone, deps, PER_GROUP),
  );
  // Parent, grandparent, … up to the zone's root (included: operators may post there).
  const ancestors = await tasks.ancestors(task.id, MAX_ANCESTORS);
  section(
    'Findings of the tasks above this one',
    await findingsOfTasks(tables, task.zone, ancestors, PER_GROUP),
  );
  if (cfg.contextHits > 0) {
    const hits = await search.search(tables.heavyReader, {
      zone: task.zone,
      terms: termsOf(`${task.title} ${task.prompt}`),
      match: 'any',
      exclude: [...seen],
      limit: cfg.contextHits,
    });
    // Without terms there is no search, only recency: not relevant enough to spend budget on.
    section(
      'Findings related to this task',
      hits.filter((h) => h.score !== null).map((h) => h.row),
    );
  }
  if (out.length === 0) return null;
  return { text: `${HEAD}\n${out.join('\n')}${TAIL}`, ref };
}

const render = (r: FindingRow): string =>
  `### ${r.title} [${r.id}${r.tags ? `; tags: ${r.tags.split(' ').join(', ')}` : ''}; task ${r.task_id ?? '-'}]\n${r.body}\n`;

const bytes = (s: string) => Buffer.byteLength(s);

/** `s` cut to at most `max` UTF-8 bytes, never inside a character. */
function cut(s: string, max: number): string {
  if (bytes(s) <= max) return s;
  const marker = '\n[… cut]\n';
  const room = Math.max(0, max - bytes(marker));
  return (
    Buffer.from(s)
      .subarray(0, room)
      .toString('utf8')
      .replace(/\uFFFD+$/, '') + marker
  );
}

class Budget {
  constructor(public left: number) {}
  fits(s: string): boolean {
    return bytes(s) <= this.left;
  }
  take(s: string): void {
    this.left -= bytes(s);
  }
}
