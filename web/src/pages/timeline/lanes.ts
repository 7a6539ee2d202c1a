import type { LogEvent, Session } from '../../lib/types.ts';

/** A stretch of one state (running, idle, waiting, …) in a session's lane. */
export interface Span {
  from: number;
  to: number;
  state: string;
}

/** A point in a lane: an input (a turn starts), an output, or a signal. */
export interface Mark {
  at: number;
  kind: 'input' | 'output' | 'signal';
  text: string;
  seq: number;
}

export interface Lane {
  session: Session;
  depth: number;
  spans: Span[];
  marks: Mark[];
}

/** The session tree under `root`, depth first (children by creation), as lane order. */
export function treeOrder(all: Session[], root: string): { session: Session; depth: number }[] {
  const children = new Map<string, Session[]>();
  for (const s of all) if (s.parentId) children.set(s.parentId, [...(children.get(s.parentId) ?? []), s]);
  const byId = new Map(all.map((s) => [s.id, s]));
  const out: { session: Session; depth: number }[] = [];
  const walk = (s: Session, depth: number) => {
    out.push({ session: s, depth });
    for (const c of (children.get(s.id) ?? []).sort((a, b) => a.createdAt - b.createdAt)) walk(c, depth + 1);
  };
  const r = byId.get(root);
  if (r) walk(r, 0);
  return out;
}

const text = (e: LogEvent) => {
  const t = e.payload.text ?? e.payload.signal ?? '';
  return String(t).slice(0, 200);
};

/**
 * One lane per session: its states as spans (from `session.status`: each `to` lasts until
 * the next change, the last one until it ended or `now`), its inputs and outputs (turns) and
 * the signals sent to it as marks.
 */
export function buildLanes(
  order: { session: Session; depth: number }[],
  events: LogEvent[],
  now: number,
): Lane[] {
  const of = new Map<string, LogEvent[]>();
  for (const e of events) {
    const id = e.type === 'signal' && typeof e.payload.target === 'string' ? e.payload.target : e.session_id;
    if (id) of.set(id, [...(of.get(id) ?? []), e]);
  }
  return order.map(({ session, depth }) => {
    const es = (of.get(session.id) ?? []).sort((a, b) => a.seq - b.seq);
    const spans: Span[] = [];
    const marks: Mark[] = [];
    let state = 'pending';
    let since = session.createdAt;
    for (const e of es) {
      if (e.type === 'session.status' && typeof e.payload.to === 'string') {
        if (e.ts > since) spans.push({ from: since, to: e.ts, state });
        state = e.payload.to;
        since = e.ts;
      } else if (e.type === 'session.input')
        marks.push({ at: e.ts, kind: 'input', text: text(e), seq: e.seq });
      else if (e.type === 'session.output')
        marks.push({ at: e.ts, kind: 'output', text: text(e), seq: e.seq });
      else if (e.type === 'signal') marks.push({ at: e.ts, kind: 'signal', text: text(e), seq: e.seq });
    }
    const end = session.endedAt ?? (state === 'stopped' ? since : now);
    if (end > since || spans.length === 0) spans.push({ from: since, to: Math.max(end, since + 1), state });
    return { session, depth, spans, marks };
  });
}

/** The time window the lanes cover. */
export function extent(lanes: Lane[], now: number): { t0: number; t1: number } {
  let t0 = Number.POSITIVE_INFINITY;
  let t1 = 0;
  for (const l of lanes) {
    t0 = Math.min(t0, l.session.createdAt);
    for (const s of l.spans) t1 = Math.max(t1, s.to);
    for (const m of l.marks) t1 = Math.max(t1, m.at);
  }
  if (!Number.isFinite(t0)) return { t0: now - 1000, t1: now };
  return { t0, t1: Math.max(t1, t0 + 1000) };
}
