/**
 * Many small pieces of untrusted work (script steps, batches of route matches) take turns with
 * the rest of the server. On SQLite a piece's writes commit synchronously within the same chain
 * of promises, and matching is plain computation, so without a gate such work never lets the
 * event loop turn: a 1,000-step script held it 1.2 s, ten at once 2.3 s. A piece asks for a
 * turn first. Turns are handed out in `setImmediate` callbacks, in the order asked (each caller
 * asks for one piece at a time, so callers alternate: the per-caller budget is one piece a
 * turn), while the current turn of the event loop has spent less than `sliceMs` on pieces of
 * this gate; the rest wait for the next turn, after the loop has polled for I/O (HTTP requests,
 * sockets, timers). One gate is shared by all the callers of one kind of work, so a loop turn
 * spends at most `sliceMs` (and one piece) on it however many callers there are; a slice of 0
 * lets one piece through per turn.
 *
 * How: each `turn()` queues a waiter and schedules one callback. A callback releases the
 * oldest waiter when the slice has time left, else schedules itself again for the next loop
 * turn. The first callback of a loop turn starts the slice, and schedules its end, which
 * runs first in the next loop turn (immediates run in the order they were queued).
 */
export class SliceGate {
  private readonly waiting: Array<() => void> = [];
  /** When the current slice began (`performance.now()`); null between slices. */
  private sliceStart: number | null = null;

  constructor(private readonly sliceMs: number) {}

  /** Resolves when the caller may run its next piece. */
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
