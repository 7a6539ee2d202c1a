import type { ChildProcess } from 'node:child_process';

/**
 * Servers and runners a test file starts must not outlive it, even when its `after` hooks never
 * run: the runner cut it off at its time bound, or it was interrupted. When the file's process
 * ends in a way it can see (exit, SIGTERM, SIGINT), each one still running is SIGKILLed; their
 * agents follow through their lifelines.
 */
const live = new Set<ChildProcess>();
let armed = false;

export function reapOnExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (armed) return;
  armed = true;
  const killAll = () => {
    for (const c of live) {
      try {
        c.kill('SIGKILL');
      } catch {}
    }
  };
  process.once('exit', killAll);
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(code);
    });
  }
}
