import { renderKeyValues } from '../table.ts';
import { eventViews } from './events.ts';
import { fdViews } from './fds.ts';
import { text, type View, type ViewContext } from './format.ts';
import { inboxViews } from './inbox.ts';
import { knowledgeViews } from './knowledge.ts';
import { personaViews } from './personas.ts';
import { pluginViews } from './plugins.ts';
import { scheduleViews } from './schedules.ts';
import { sessionViews } from './sessions.ts';
import { statusViews } from './status.ts';
import { streamViews } from './streams.ts';
import { taskViews } from './tasks.ts';

export type { View, ViewContext } from './format.ts';

/** Syscall name -> how its output reads in a terminal. */
export const views: Readonly<Record<string, View>> = {
  ...sessionViews,
  ...streamViews,
  ...fdViews,
  ...eventViews,
  ...taskViews,
  ...pluginViews,
  ...personaViews,
  ...inboxViews,
  ...statusViews,
  ...scheduleViews,
  ...knowledgeViews,
};

/** A syscall without a view of its own: its fields as `key  value`, structured values as compact JSON. */
export const genericView: View = (output, ctx) => {
  if (output === null || typeof output !== 'object' || Array.isArray(output))
    return `${JSON.stringify(output)}\n`;
  const pairs = Object.entries(output).map(([k, v]): [string, string] => [k, text(v)]);
  return pairs.length ? renderKeyValues(pairs, ctx) : 'ok\n';
};

export const renderOutput = (syscall: string, output: unknown, ctx: ViewContext): string =>
  (views[syscall] ?? genericView)(output, ctx);
