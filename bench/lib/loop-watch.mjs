/**
 * Preloaded into a benched server (`NODE_OPTIONS=--import …/loop-watch.mjs`), main thread only:
 * what the server's own event loop did, apart from what a prober sees through the network and
 * the machine's scheduler. Plain JavaScript, so it loads into the build without tsx.
 *
 * A 5 ms timer notes, at each turn, the wall time since its last turn (the gap: how long the
 * loop was held) and, from Linux's `/proc/thread-self/schedstat`, how much of the gap the main
 * thread spent on a CPU (its own work) and waiting for one (the machine's doing). On a loaded
 * machine the gap grows with the wait; the CPU part is the server's.
 *
 * Each SIGUSR2 ends a window: it writes `<WARREN_BENCH_WATCH_DIR>/loop-<n>.json` (n counts from
 * 1) and, with `WARREN_BENCH_PROFILE=1`, `prof-<n>.cpuprofile` (the main thread's CPU profile
 * over the window), then starts the next window.
 */
import { openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.WARREN_BENCH_WATCH_DIR;
if (isMainThread && dir) {
  // Opened once and read at offset 0 each time (a few µs): the main thread's own counters.
  const fd = openSync('/proc/thread-self/schedstat', 'r');
  const buf = Buffer.alloc(128);
  const sched = () => {
    const [run, wait] = buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0)).split(' ');
    return { run: Number(run) / 1e6, wait: Number(wait) / 1e6 };
  };
  let gaps = { wall: [], cpu: [], wait: [], end: [] };
  let last = { at: performance.now(), ...sched() };
  setInterval(() => {
    const now = { at: performance.now(), ...sched() };
    gaps.wall.push(now.at - last.at);
    gaps.cpu.push(now.run - last.run);
    gaps.wait.push(now.wait - last.wait);
    // On the clock CPU profiles use (µs, monotonic), to find a gap's samples in the profile.
    gaps.end.push(Number(process.hrtime.bigint() / 1000n));
    last = now;
  }, 5).unref();

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

  const round = (ms) => Math.round(ms * 100) / 100;
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return { p99: round(s[Math.floor(0.99 * s.length)] ?? 0), max: round(s.at(-1) ?? 0) };
  };
  let n = 0;
  process.on('SIGUSR2', () => {
    n++;
    // The five gaps with the most CPU in them: where to look in the profile.
    const worst = gaps.cpu
      .map((cpu, i) => ({ cpu: round(cpu), gap: round(gaps.wall[i]), endUs: gaps.end[i] }))
      .sort((a, b) => b.cpu - a.cpu)
      .slice(0, 5);
    const loop = {
      worst,
      gap: stats(gaps.wall),
      cpu: stats(gaps.cpu),
      wait: stats(gaps.wait),
      turns: gaps.wall.length,
    };
    if (session) {
      writeFileSync(join(dir, `prof-${n}.cpuprofile`), JSON.stringify(post('Profiler.stop').profile));
      writeFileSync(join(dir, `gaps-${n}.json`), JSON.stringify(gaps));
    }
    // Last and whole (renamed into place): the bench reads the window once this file appears.
    writeFileSync(join(dir, 'loop.tmp'), JSON.stringify(loop));
    renameSync(join(dir, 'loop.tmp'), join(dir, `loop-${n}.json`));
    // The writes above are the bench's, not the next window's.
    if (session) post('Profiler.start');
    gaps = { wall: [], cpu: [], wait: [], end: [] };
    last = { at: performance.now(), ...sched() };
  });
}
