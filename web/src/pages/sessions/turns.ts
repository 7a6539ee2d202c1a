import type { LogEvent } from '../../lib/types.ts';

/** One turn: what came in (prompt, message, signal) and everything the session did with it. */
export interface Turn {
  key: number;
  events: LogEvent[];
}

/** What a person reads in a transcript; the rest (fds, streams, usage, activity…) is kernel plumbing. */
const READ = new Set([
  'session.spawned',
  'session.input',
  'session.output',
  'session.thought',
  'session.tool_call',
  'session.tool_result',
  'session.error',
  'session.notice',
  'signal',
  'budget.exceeded',
  'task.escalated',
  'escalation.answered',
]);

/** A status change is read when it ends or pauses the session; running ⇄ idle is every turn's. */
export const isPlumbing = (e: LogEvent) =>
  e.type === 'session.status' ? !/^(stopped|suspended)$/.test(String(e.payload.to)) : !READ.has(e.type);

/** Events in order, cut into turns at each input the session receives. */
export function toTurns(events: LogEvent[]): Turn[] {
  const turns: Turn[] = [];
  let cur: Turn | null = null;
  for (const e of events) {
    if (!cur || e.type === 'session.input' || e.type === 'session.spawned') {
      cur = { key: e.seq, events: [] };
      turns.push(cur);
    }
    cur.events.push(e);
  }
  return turns;
}

/** A tool call's id as each runtime logs it (claude-code and codex `id`, acp `toolCallId`). */
export const toolId = (e: LogEvent): string | null => {
  const p = e.payload;
  const id = p.id ?? p.toolCallId ?? p.tool_use_id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
};

/** Each tool call with the result that answers it (by id), and the results no call of this page claims. */
export function pairTools(events: LogEvent[]): { results: Map<number, LogEvent>; claimed: Set<number> } {
  const results = new Map<number, LogEvent>();
  const claimed = new Set<number>();
  const open = new Map<string, number>();
  for (const e of events) {
    const id = toolId(e);
    if (e.type === 'session.tool_call' && id) open.set(id, e.seq);
    if (e.type === 'session.tool_result' && id && open.has(id)) {
      results.set(open.get(id) as number, e);
      claimed.add(e.seq);
      open.delete(id);
    }
  }
  return { results, claimed };
}
