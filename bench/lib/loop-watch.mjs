/**
 * Preloaded into a benched server (`NODE_OPTIONS=--import …/loop-watch.mjs`), main thread only:
 * what the server's own event loop did, apart from what a prober sees through the network and
 * the machine's scheduler. Plain JavaScript, so it loads into the build without tsx.
 *
 * Each SIGUSR2 ends a window: it writes `<WARREN_BENCH_WATCH_DIR>/loop-<n>.json` (n counts from
 * 1) with the loop's delay over the window (`monitorEventLoopDelay`, ms) and, with
 * `WARREN_BENCH_PROFILE=1`, `prof-<n>.cpuprofile` (the main thread's CPU profile over the
 * window), then starts the next window.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.WARREN_BENCH_WATCH_DIR;
if (isMainThread && dir) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const session = process.env.WARREN_BENCH_PROFILE === '1' ? new Session() : undefined;
  // The in-thread inspector session answers synchronously: each post's callback runs before it returns.
  const post = (method, params) => {
    let out;
    session.post(method, params, (err, res) => {
      if (err) throw err;
      out = res;
    });
    return out;
  };
  if (session) {
    session.connect();
    post('Profiler.enable');
    post('Profiler.setSamplingInterval', { interval: 250 });
    post('Profiler.start');
  }
  let n = 0;
  process.on('SIGUSR2', () => {
    n++;
    // Gaps between the 5 ms timer's turns, in ms: the longest is the longest the loop was held.
    const ms = (ns) => Math.round(ns / 1e4) / 100;
    const loop = { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) };
    if (session)
      writeFileSync(join(dir, `prof-${n}.cpuprofile`), JSON.stringify(post('Profiler.stop').profile));
    // Last and whole (renamed into place): the bench reads the window once this file appears.
    writeFileSync(join(dir, 'loop.tmp'), JSON.stringify(loop));
    renameSync(join(dir, 'loop.tmp'), join(dir, `loop-${n}.json`));
    // The writes above are the bench's, not the next window's.
    if (session) post('Profiler.start');
    delay.reset();
  });
}
