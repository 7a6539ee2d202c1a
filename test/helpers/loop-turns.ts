/**
 * The event loop's turns, counted (one `setImmediate` callback a turn: an immediate queued in a
 * turn's check phase runs in the next one): tests say "it let the loop turn" or "one piece a
 * turn" with counts, never with a wall time.
 */
export function loopTurns(): { now: () => number; stop: () => void } {
  let turns = 0;
  let on = true;
  const tick = () => {
    turns++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    now: () => turns,
    stop: () => {
      on = false;
    },
  };
}

/** How many times the event loop turned while `work` ran, with its answer. */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<[T, number]> {
  const turns = loopTurns();
  try {
    return [await work(), turns.now()];
  } finally {
    turns.stop();
  }
}
