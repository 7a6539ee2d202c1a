import { createContext, type ReactNode, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { followLive } from './sse.ts';
import type { LogEvent } from './types.ts';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';
type Listener = (e: LogEvent) => void;

interface LiveHub {
  /** The last seq seen: everything up to it has been delivered to listeners. */
  lastSeq(): number;
  subscribe(fn: Listener): () => void;
}

const HubContext = createContext<LiveHub | null>(null);
const StatusContext = createContext<LiveStatus>('connecting');

/** One live stream for the whole app; pages subscribe to it. */
export function LiveProvider({ children }: { children: ReactNode }) {
  const [status, setStatus] = useState<LiveStatus>('connecting');
  const hub = useMemo(() => {
    const listeners = new Set<Listener>();
    let last = 0;
    return {
      listeners,
      lastSeq: () => last,
      deliver(e: LogEvent) {
        if (e.seq <= last) return;
        last = e.seq;
        for (const fn of listeners) fn(e);
      },
      subscribe(fn: Listener) {
        listeners.add(fn);
        return () => {
          listeners.delete(fn);
        };
      },
    };
  }, []);
  useEffect(
    () => followLive({ onEvent: (e) => hub.deliver(e), onStatus: setStatus, lastSeq: hub.lastSeq }),
    [hub],
  );
  return (
    <HubContext.Provider value={hub}>
      <StatusContext.Provider value={status}>{children}</StatusContext.Provider>
    </HubContext.Provider>
  );
}

export function useLiveHub(): LiveHub {
  const l = useContext(HubContext);
  if (!l) throw new Error('useLiveHub outside LiveProvider');
  return l;
}

export const useLiveStatus = () => useContext(StatusContext);

/** Calls the latest `fn` for each live event matching the latest `pred`. */
export function useLiveEvents(pred: (e: LogEvent) => boolean, fn: (e: LogEvent) => void) {
  const hub = useLiveHub();
  const ref = useRef({ pred, fn });
  ref.current = { pred, fn };
  useEffect(() => hub.subscribe((e) => ref.current.pred(e) && ref.current.fn(e)), [hub]);
}

/** Re-runs `refetch` (debounced) when live events matching `pred` arrive. */
export function useLiveRefetch(pred: (e: LogEvent) => boolean, refetch: () => void, ms = 150) {
  const hub = useLiveHub();
  const ref = useRef({ pred, refetch });
  ref.current = { pred, refetch };
  useEffect(() => {
    let t: ReturnType<typeof setTimeout> | undefined;
    const off = hub.subscribe((e) => {
      if (!ref.current.pred(e)) return;
      clearTimeout(t);
      t = setTimeout(() => ref.current.refetch(), ms);
    });
    return () => {
      off();
      clearTimeout(t);
    };
  }, [hub, ms]);
}
