import type { ServerResponse } from 'node:http';

/**
 * A mock model API's scripted delay before it answers: over after `ms`, or as soon as the
 * client hangs up (a killed agent) — a pending timer would hold the test process open for
 * the rest of the delay after its last test.
 */
export function replyDelay(ms: number, res: ServerResponse): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once('close', done);
  });
}
