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

/** One timer a watched clock armed. */
export interface ArmedTimer {
  /** When it was armed (ms, this clock). */
  at: number;
  ms: number;
  keepAlive: boolean;
  fired: boolean;
}

/**
 * The system clock, with every timer it arms recorded: how long it was for and whether it
 * fired. The kernel's bounded waits (a blocking read, `ipc_wait`) are `keepAlive` timers, so a
 * test can tell, without timing anything, that a wait was capped (the timer's length) and
 * whether it ended by its timer or was woken by what it waited for (`fired`).
 */
export function watchedClock(): Clock & { timers: ArmedTimer[]; since(mark: number): ArmedTimer[] } {
  const timers: ArmedTimer[] = [];
  return {
    timers,
    /** Timers armed after the first `mark` were (mark = `timers.length` read earlier). */
    since: (mark) => timers.slice(mark),
    now: () => Date.now(),
    setTimeout: (fn, ms, opts) => {
      const armed: ArmedTimer = { at: Date.now(), ms, keepAlive: opts?.keepAlive === true, fired: false };
      timers.push(armed);
      const h = setTimeout(() => {
        armed.fired = true;
        fn();
      }, ms);
      if (!opts?.keepAlive) h.unref();
      return h;
    },
    clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  };
}

/**
 * The system's time, with timers that fire only when the test says (`fire()`): what waits on a
 * timer is then decided by the test, not by how fast a loaded machine got there.
 */
export function heldClock(): Clock & { fire(): number } {
  const held = new Map<object, () => void>();
  return {
    now: () => Date.now(),
    setTimeout: (fn) => {
      const h = {};
      held.set(h, fn);
      return h as ReturnType<Clock['setTimeout']>;
    },
    clearTimeout: (h) => void held.delete(h as object),
    /** Runs every timer still armed; how many there were. */
    fire: () => {
      const fns = [...held.values()];
      held.clear();
      for (const fn of fns) fn();
      return fns.length;
    },
  };
}
