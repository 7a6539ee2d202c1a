import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';
import { allPages, readSession } from './api.ts';
import { useLiveEvents, useLiveRefetch } from './live.tsx';
import { useLiveWindow, withReads } from './liveWindow.ts';
import { useRoute } from './router.tsx';
import { BAD_ENDS, sessionState } from './state.ts';
import type { Escalation, LogEvent, Session, Task } from './types.ts';
import { useFetch } from './useFetch.ts';

/** Minutes without progress (no output, no status change) before a live session counts as stuck. */
export const DEFAULT_STUCK_MINUTES = 10;
/** A crash or budget stop stays on the home view this long after it happened. */
const RECENT_MS = 24 * 3600_000;

export interface Needs {
  escalations: Escalation[];
  /** Crashed or budget-stopped in the last day. */
  ended: Session[];
  stuck: Session[];
  /** Tasks whose result waits in review for the operator. */
  review: Task[];
  /** Sessions whose task waits on an escalation: their state is `waiting`. */
  waiting: Set<string>;
  stuckMinutes: number;
  loaded: boolean;
  error: Error | null;
  reload(): void;
}

const EMPTY: Needs = {
  escalations: [],
  ended: [],
  stuck: [],
  review: [],
  waiting: new Set(),
  stuckMinutes: DEFAULT_STUCK_MINUTES,
  loaded: false,
  error: null,
  reload: () => {},
};

const NeedsContext = createContext<Needs>(EMPTY);

/** The plugin may be off: its list is then empty, not an error. */
const orNone = <T,>(p: Promise<T[]>) => p.catch(() => [] as T[]);

async function load() {
  const [escalations, sessions, review, waitingTasks] = await Promise.all([
    orNone(allPages<Escalation>('/v1/inbox', 'escalations', { all: true })),
    allPages<Session>('/v1/sessions', 'sessions', { all: true }),
    orNone(allPages<Task>('/v1/tasks', 'tasks', { status: 'review' })),
    orNone(allPages<Task>('/v1/tasks', 'tasks', { status: 'waiting' })),
  ]);
  return { escalations, sessions, review, waitingTasks };
}

const OPERATOR_STATES = /^(review|waiting)$/;

/** What changes the lists but a session: an escalation, a task entering or leaving review or waiting. */
const changes = (e: LogEvent) =>
  e.type.startsWith('escalation.') ||
  e.type === 'task.escalated' ||
  (e.type === 'task.status' &&
    (OPERATOR_STATES.test(String(e.payload.to)) || OPERATOR_STATES.test(String(e.payload.from))));

/** An ending: only that session is read again (a crash or a budget stop joins `ended`). */
const ending = (e: LogEvent) =>
  e.type === 'session.status' && e.payload.to === 'stopped' && e.session_id ? e.session_id : undefined;

/**
 * What needs the operator, loaded once for the header's counts and the home view. It is read
 * again only when something it lists may have changed; a session's progress (output, running ⇄
 * idle) is taken from the live events, so neither a busy nor an idle tab re-reads every session.
 */
export function NeedsProvider({ children }: { children: ReactNode }) {
  const { search } = useRoute();
  const stuckMinutes = Number(search.get('stuck')) || DEFAULT_STUCK_MINUTES;
  const r = useFetch(load, []);
  useLiveRefetch(changes, r.reload, 1000);
  // Not the whole list per window of endings: a steady stream of them would read it every second.
  useLiveWindow(
    r,
    {
      match: ending,
      read: readSession,
      apply: (d, reads) => (d ? { ...d, sessions: withReads(d.sessions, reads) } : undefined),
    },
    1000,
  );
  useLiveRefetch((e) => e.type === 'session.spawned', r.reload, 5000);
  const [seen, setSeen] = useState(() => new Map<string, { status: string | null; ts: number }>());
  useLiveEvents(
    (e) => !!e.session_id && (e.type === 'session.output' || e.type === 'session.status'),
    (e) =>
      setSeen((prev) => {
        const id = e.session_id as string;
        const status = e.type === 'session.status' ? String(e.payload.to) : (prev.get(id)?.status ?? null);
        return new Map(prev).set(id, { status, ts: e.ts });
      }),
  );
  // Stuck is a matter of time passing, which no event announces: recount, with no request.
  const [tick, setTick] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setTick(Date.now()), 15_000);
    return () => clearInterval(t);
  }, []);
  const now = Math.max(tick, Date.now());
  const d = r.data;
  const waiting = new Set((d?.waitingTasks ?? []).map((t) => t.sessionId).filter((s): s is string => !!s));
  const sessions = d?.sessions ?? [];
  const value: Needs = {
    escalations: d?.escalations ?? [],
    ended: sessions.filter(
      (s) => BAD_ENDS.has(sessionState(s)) && s.endedAt !== null && now - s.endedAt < RECENT_MS,
    ),
    stuck: sessions.filter((s) => {
      const live = seen.get(s.id);
      const status = live?.status ?? s.status;
      const at = Math.max(s.updatedAt, live?.ts ?? 0);
      return (
        (status === 'running' || status === 'pending') &&
        s.id !== 'init' &&
        !waiting.has(s.id) &&
        now - at > stuckMinutes * 60_000
      );
    }),
    review: d?.review ?? [],
    waiting,
    stuckMinutes,
    loaded: !!d,
    error: r.error,
    reload: r.reload,
  };
  return <NeedsContext.Provider value={value}>{children}</NeedsContext.Provider>;
}

export const useNeeds = () => useContext(NeedsContext);

/** How many things wait for the operator, by kind (the header's counts). */
export function needCounts(n: Needs) {
  return {
    escalations: n.escalations.filter((e) => e.status === 'open').length,
    ended: n.ended.length,
    stuck: n.stuck.length,
    review: n.review.length,
  };
}
