import type { LogEvent } from '../../lib/types.ts';

/** One turn: what came in (prompt, message, signal) and everything the session did with it. */
export interface Turn {
  key: number;
  events: LogEvent[];
}

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
