import { useEffect, useRef } from 'react';
import { ApiError, api } from '../../lib/api.ts';
import { useLiveHub } from '../../lib/live.tsx';
import type { Session } from '../../lib/types.ts';

/** More sessions than this changed in one window: one read of the whole list is cheaper. */
const MAX_ROWS_READ = 40;
/** Events are gathered this long, then the sessions they name are read once each. */
const WINDOW_MS = 250;

interface Rows {
  data: Session[] | null;
  set: (rows: Session[]) => void;
  reload: () => void;
}

/**
 * Keeps a loaded session list current from the live stream without reading the whole list per
 * event: the sessions a window of `session.*` events names are read again alone, with their
 * ancestors (a turn, a usage report or an ending moves their subtree totals); one a read no
 * longer finds is dropped. An idle tab at 1,000 sessions then moves a few kilobytes per event
 * instead of the list (issue 29, "live and light"). Past MAX_ROWS_READ sessions in a window
 * the list is read again once.
 */
export function useLiveSessionRows(rows: Rows): void {
  const hub = useLiveHub();
  const ref = useRef(rows);
  ref.current = rows;
  useEffect(() => {
    const pending = new Map<string, string>(); // session id → zone
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const flush = async () => {
      const byId = new Map((ref.current.data ?? []).map((s) => [s.id, s]));
      const want = new Map<string, string>();
      for (const [id, zone] of pending) {
        let at: string | null = id;
        for (let hops = 0; at && hops < 64 && !want.has(at); hops++) {
          want.set(at, byId.get(at)?.zone ?? zone);
          at = byId.get(at)?.parentId ?? null;
        }
      }
      pending.clear();
      if (want.size > MAX_ROWS_READ) return ref.current.reload();
      const read = await Promise.all(
        [...want].map(([id, zone]) =>
          api<{ session: Session }>('GET', `/v1/sessions/${encodeURIComponent(id)}`, undefined, zone).then(
            (r) => r.session,
            // Gone (deleted, reaped): dropped. Any other failure keeps the row as it was.
            (e: unknown) => (e instanceof ApiError && e.status === 404 ? null : undefined),
          ),
        ),
      );
      if (stopped) return;
      const next = new Map((ref.current.data ?? []).map((s) => [s.id, s]));
      [...want.keys()].forEach((id, i) => {
        const s = read[i];
        if (s === null) next.delete(id);
        else if (s) next.set(id, s);
      });
      ref.current.set([...next.values()]);
    };
    const off = hub.subscribe((e) => {
      if (!e.type.startsWith('session.') || !e.session_id) return;
      pending.set(e.session_id, e.zone);
      // A window from the first event, not a debounce: a steady stream of events still shows.
      timer ??= setTimeout(() => {
        timer = undefined;
        void flush();
      }, WINDOW_MS);
    });
    return () => {
      stopped = true;
      off();
      clearTimeout(timer);
    };
  }, [hub]);
}
