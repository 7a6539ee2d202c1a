import { useCallback, useEffect, useState } from 'react';
import { api, qs } from '../../lib/api.ts';
import { useLiveHub, useOnReconnect } from '../../lib/live.tsx';
import type { LogEvent } from '../../lib/types.ts';

/** Events per page: the latest page first, older ones on demand. */
export const SESSION_PAGE = 200;

/**
 * A session's log: the latest page (newest first from `events`), older pages when asked,
 * and live events merged in, all keyed by seq so an event at a seam shows once. A session
 * with tens of thousands of events opens as fast as one with a few.
 */
export function useSessionEvents(id: string) {
  const hub = useLiveHub();
  const [bySeq, setBySeq] = useState(() => new Map<number, LogEvent>());
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const add = useCallback((es: LogEvent[]) => {
    setBySeq((prev) => {
      const next = new Map(prev);
      for (const e of es) next.set(e.seq, e);
      return next;
    });
  }, []);
  const page = useCallback(
    async (before?: number) => {
      setLoading(true);
      try {
        const r = await api<{ events: LogEvent[] }>(
          'GET',
          `/v1/events${qs({ session: id, before, limit: SESSION_PAGE })}`,
        );
        add(r.events);
        setError(null);
        setMore(r.events.length === SESSION_PAGE);
      } catch (e) {
        setError(e as Error);
      } finally {
        setLoading(false);
      }
    },
    [id, add],
  );
  useEffect(() => {
    setBySeq(new Map());
    setMore(false);
    setError(null);
    // Listen before the first read: whatever lands meanwhile is kept, once, by seq.
    const off = hub.subscribe((e) => {
      if (e.session_id === id || (e.type === 'signal' && e.payload.target === id)) add([e]);
    });
    void page();
    return off;
  }, [hub, id, page, add]);
  const events = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  // The latest page again after a reconnect: merged by seq, so nothing shows twice.
  useOnReconnect(() => void page(), error !== null);
  const older = () => void page(events[0]?.seq);
  return { events, more, loading, older, error };
}
