/** Time, injected so tests can run kernels side by side and drive timers themselves. */
export interface Clock {
  now(): number;
  /**
   * By default a timer does not keep the process alive (grace periods, ticks); pass
   * `keepAlive` for work in progress that must finish (a bounded wait, an agent's sleep).
   */
  setTimeout(fn: () => void, ms: number, opts?: { keepAlive?: boolean }): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export type TimerHandle = { readonly __timer: unique symbol } | ReturnType<typeof setTimeout>;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms, opts) => {
    const t = setTimeout(fn, ms);
    if (!opts?.keepAlive) t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};
