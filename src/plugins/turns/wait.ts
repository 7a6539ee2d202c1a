import type { Kernel } from '../../kernel/kernel.ts';
import type { LogEvent } from '../../store/events.ts';
import type { TimerHandle } from '../../util/clock.ts';

/**
 * Resolve when a committed event matches `pred`, after `ms`, or on abort: the kernel's commit
 * notifications, not polling. Returns whether an event matched. Subscribe before checking
 * state, then check, then await the returned promise (see `armCommit`).
 */
export function armCommit(
  kernel: Kernel,
  pred: (e: LogEvent) => boolean,
  ms: number,
  signal?: AbortSignal,
): { fired: Promise<boolean>; cancel(): void } {
  let done: (v: boolean) => void = () => {};
  const fired = new Promise<boolean>((r) => (done = r));
  let timer: TimerHandle | undefined;
  const unsubscribe = kernel.store.writer.onCommit((events) => {
    if (events.some(pred)) finish(true);
  });
  const onAbort = () => finish(false);
  const finish = (v: boolean) => {
    unsubscribe();
    if (timer) kernel.clock.clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    done(v);
  };
  timer = kernel.clock.setTimeout(() => finish(false), ms, { keepAlive: true });
  signal?.addEventListener('abort', onAbort);
  if (signal?.aborted) finish(false);
  return { fired, cancel: () => finish(false) };
}

export const nextCommit = (
  kernel: Kernel,
  pred: (e: LogEvent) => boolean,
  ms: number,
  signal?: AbortSignal,
) => armCommit(kernel, pred, ms, signal).fired;
