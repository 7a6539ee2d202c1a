/**
 * Script steps take turns with the rest of the server. On SQLite a step's writes commit
 * synchronously within the same chain of promises, so a script that never waits for input
 * ran all its steps without the event loop ever turning: a 1,000-step script held it 1.2 s,
 * ten at once 2.3 s. Every step now asks for a turn first. Turns are handed out in
 * `setImmediate` callbacks, in the order asked (each agent asks for one step at a time, so
 * agents alternate: the per-caller budget is one step a turn), while the current turn of the
 * event loop has spent less than `sliceMs` on them; the rest wait for the next turn, after
 * the loop has polled for I/O (HTTP requests, sockets, timers).
 *
 * How: each `turn()` queues a waiter and schedules one callback. A callback releases the
 * oldest waiter when the slice has time left, else schedules itself again for the next loop
 * turn. The first callback of a loop turn starts the slice, and schedules its end, which
 * runs first in the next loop turn (immediates run in the order they were queued).
 */
export class StepGate {
  private readonly waiting: Array<() => void> = [];
  /** When the current slice began (`performance.now()`); null between slices. */
  private sliceStart: number | null = null;

  constructor(private readonly sliceMs: number) {}

  /** Resolves when the caller may run its next step. */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      setImmediate(this.tick);
    });
  }

  private readonly tick = () => {
    const now = performance.now();
    if (this.sliceStart === null) {
      this.sliceStart = now;
      setImmediate(this.endSlice);
    } else if (now - this.sliceStart >= this.sliceMs) {
      setImmediate(this.tick);
      return;
    }
    this.waiting.shift()?.();
  };

  private readonly endSlice = () => {
    this.sliceStart = null;
  };
}
