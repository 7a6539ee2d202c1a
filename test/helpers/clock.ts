import type { Clock } from '../../src/util/clock.ts';

/** A clock the test moves by hand: the writer stamps each batch with one reading. */
export function manualClock(start: number): Clock & { set(t: number): void } {
  let t = start;
  return {
    now: () => t,
    set: (v) => {
      t = v;
    },
    setTimeout: (fn, ms) => {
      const h = setTimeout(fn, ms);
      h.unref();
      return h;
    },
    clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  };
}
