import { createContext, type ReactNode, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { eventWindow } from './eventWindow.ts';
import { followLive } from './sse.ts';
import type { LogEvent } from './types.ts';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';
type Listener = (e: LogEvent) => void;
/** Called each time the stream (re)connects; `first` for the tab's first connection. */
type ConnectListener = (first: boolean) => void;

interface LiveHub {
  /** The last seq seen: everything up to it has been delivered to listeners. */
  lastSeq(): number;
  subscribe(fn: Listener): () => void;
  onConnect(fn: ConnectListener): () => void;
}

const HubContext = createContext<LiveHub | null>(null);
const StatusContext = createContext<LiveStatus>('connecting');

/** One live stream for the whole app; pages subscribe to it. */
export function LiveProvider({ children }: { children: ReactNode }) {
  const [status, setStatus] = useState<LiveStatus>('connecting');
  const hub = useMemo(() => {
    const listeners = new Set<Listener>();
    const connects = new Set<ConnectListener>();
    let last = 0;
    let connections = 0;
    return {
      listeners,
      lastSeq: () => last,
      cursor(seq: number) {
        if (seq > last) last = seq;
      },
      connected() {
        const first = connections++ === 0;
        for (const fn of connects) fn(first);
      },
      onConnect(fn: ConnectListener) {
        connects.add(fn);
        return () => {
          connects.delete(fn);
        };
      },
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
    () =>
      followLive({
        onEvent: (e) => hub.deliver(e),
        onCursor: (seq) => hub.cursor(seq),
        onStatus: (s) => {
          setStatus(s);
          if (s === 'live') hub.connected();
        },
        lastSeq: hub.lastSeq,
      }),
    [hub],
  );
  return (
    <HubContext.Provider value={hub}>
      <StatusContext.Provider value={status}>{children}</StatusContext.Provider>
    </HubContext.Provider>
  );
}

/** The hub, or null outside a LiveProvider (the login page). */
export const useOptionalLiveHub = (): LiveHub | null => useContext(HubContext);

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

/**
 * Re-runs `refetch` when live events matching `pred` arrive, once per window of `ms` from the
 * first of them (eventWindow.ts): a steady stream still refetches every `ms`.
 */
export function useLiveRefetch(pred: (e: LogEvent) => boolean, refetch: () => void, ms = 150) {
  const hub = useLiveHub();
  const ref = useRef({ pred, refetch });
  ref.current = { pred, refetch };
  useEffect(() => {
    const batch = eventWindow(ms, () => ref.current.refetch());
    const off = hub.subscribe((e) => ref.current.pred(e) && batch.add());
    return () => {
      off();
      batch.stop();
    };
  }, [hub, ms]);
}

/**
 * Calls the latest `fn` each time the live stream reconnects, so a page refetches what it
 * shows; on the tab's first connection only while `failed` (a page opened during an outage
 * recovers, a healthy first load is not fetched twice).
 */
export function useOnReconnect(fn: () => void, failed: boolean) {
  const hub = useOptionalLiveHub();
  const ref = useRef({ fn, failed });
  ref.current = { fn, failed };
  useEffect(() => hub?.onConnect((first) => (!first || ref.current.failed) && ref.current.fn()), [hub]);
}
