import { createContext, type ReactNode, useContext, useEffect } from 'react';
import { allPages } from './api.ts';
import { useLiveRefetch } from './live.tsx';
import { useRoute } from './router.tsx';
import { BAD_ENDS, sessionState } from './state.ts';
import type { Escalation, Session, Task } from './types.ts';
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

/** What needs the operator, loaded once for the header's counts and the home view. */
export function NeedsProvider({ children }: { children: ReactNode }) {
  const { search } = useRoute();
  const stuckMinutes = Number(search.get('stuck')) || DEFAULT_STUCK_MINUTES;
  const r = useFetch(load, []);
  useLiveRefetch((e) => /^(session\.(spawned|status)|escalation\.|task\.)/.test(e.type), r.reload, 1000);
  // Stuck is a matter of time passing, which no event announces.
  useEffect(() => {
    const t = setInterval(r.reload, 30_000);
    return () => clearInterval(t);
  }, [r.reload]);
  const now = Date.now();
  const d = r.data;
  const waiting = new Set((d?.waitingTasks ?? []).map((t) => t.sessionId).filter((s): s is string => !!s));
  const sessions = d?.sessions ?? [];
  const value: Needs = {
    escalations: d?.escalations ?? [],
    ended: sessions.filter(
      (s) => BAD_ENDS.has(sessionState(s)) && s.endedAt !== null && now - s.endedAt < RECENT_MS,
    ),
    stuck: sessions.filter(
      (s) =>
        (s.status === 'running' || s.status === 'pending') &&
        s.id !== 'init' &&
        !waiting.has(s.id) &&
        now - s.updatedAt > stuckMinutes * 60_000,
    ),
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
