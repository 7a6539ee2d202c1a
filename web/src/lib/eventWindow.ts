/**
 * A window from the first event, not a debounce: the first `add` schedules `fire` in `ms`,
 * later ones within the window join it, and the first after it fired opens a new one. A steady
 * stream of events (one every < `ms`) then still fires every `ms`; a debounce restarted per
 * event would wait for a pause that never comes and show nothing.
 */
export function eventWindow(ms: number, fire: () => void): { add(): void; stop(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    add() {
      timer ??= setTimeout(() => {
        timer = undefined;
        fire();
      }, ms);
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
