import { useCallback, useEffect, useRef, useState } from 'react';
import { useOnReconnect } from './live.tsx';

/**
 * Loads with `load`, keeps the last good data while reloading, and the server's error if any.
 * It loads again whenever the live stream reconnects (useOnReconnect): what changed while the
 * tab was cut off shows, and a page opened during an outage recovers when warren is back.
 */
export function useFetch<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const gen = useRef(0);
  const reload = useCallback(() => {
    const mine = ++gen.current;
    loadRef.current().then(
      (d) => {
        if (mine !== gen.current) return;
        setData(d);
        setError(null);
      },
      (e: Error) => mine === gen.current && setError(e),
    );
  }, []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: deps are the caller's inputs to load
  useEffect(reload, deps);
  useOnReconnect(reload, error !== null);
  return { data, error, reload, set: setData };
}
