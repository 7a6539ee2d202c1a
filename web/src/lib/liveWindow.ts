import { useEffect, useRef } from 'react';
import { ApiError } from './api.ts';
import { eventWindow } from './eventWindow.ts';
import { useLiveHub } from './live.tsx';
import type { LogEvent } from './types.ts';

/** More rows than this changed in one window: one read of the whole list is cheaper. */
const MAX_READS = 40;

/** A loaded list (useFetch): what it holds, how to replace it, how to read it all again. */
export interface Loaded<D> {
  data: D | null;
  set: (data: D) => void;
  reload: () => void;
}

export interface LiveWindow<D, R> {
  /** The id of the row an event changes, or undefined when it changes none of this list. */
  match(e: LogEvent): string | undefined;
  /** Widens the ids a window gathered (id → zone) before they are read; default: those. */
  widen?(gathered: Map<string, string>, data: D | null): Map<string, string>;
  /** Reads one row again alone. */
  read(id: string, zone: string): Promise<R>;
  /**
   * The list with the rows read: null for one a read no longer finds (drop it); an id whose
   * read failed otherwise is absent (its row stays as it was). Undefined: nothing to set.
   */
  apply(data: D | null, reads: Map<string, R | null>): D | undefined;
}

/** `rows` with the rows read in place (new ones last) and those a read no longer finds dropped. */
export function withReads<T extends { id: string }>(rows: readonly T[], reads: Map<string, T | null>): T[] {
  const next = new Map(rows.map((r) => [r.id, r]));
  for (const [id, r] of reads) {
    if (r === null) next.delete(id);
    else next.set(id, r);
  }
  return [...next.values()];
}

/**
 * Keeps a loaded list current from the live stream without reading the whole list per event:
 * the rows a window of matching events names are read again once each, so an idle tab at
 * 1,000 rows moves a few kilobytes per event instead of the list (issue 29, "live and light").
 * Past MAX_READS rows in a window the list is read again once.
 */
export function useLiveWindow<D, R>(loaded: Loaded<D>, spec: LiveWindow<D, R>, ms: number): void {
  const hub = useLiveHub();
  const ref = useRef({ loaded, spec });
  ref.current = { loaded, spec };
  useEffect(() => {
    const pending = new Map<string, string>(); // id → zone
    let stopped = false;
    const flush = async () => {
      const { loaded, spec } = ref.current;
      const gathered = new Map(pending);
      pending.clear();
      const want = spec.widen ? spec.widen(gathered, loaded.data) : gathered;
      if (want.size > MAX_READS) return loaded.reload();
      const got = await Promise.all(
        [...want].map(([id, zone]) =>
          spec.read(id, zone).then(
            (r): R | null | undefined => r,
            // Gone (deleted, reaped): dropped. Any other failure keeps the row as it was.
            (e: unknown) => (e instanceof ApiError && e.status === 404 ? null : undefined),
          ),
        ),
      );
      if (stopped) return;
      const reads = new Map<string, R | null>();
      [...want.keys()].forEach((id, i) => {
        const r = got[i];
        if (r !== undefined) reads.set(id, r);
      });
      const next = ref.current.spec.apply(ref.current.loaded.data, reads);
      if (next !== undefined) ref.current.loaded.set(next);
    };
    const batch = eventWindow(ms, () => void flush());
    const off = hub.subscribe((e) => {
      const id = ref.current.spec.match(e);
      if (id === undefined) return;
      pending.set(id, e.zone);
      batch.add();
    });
    return () => {
      stopped = true;
      off();
      batch.stop();
    };
  }, [hub, ms]);
}
