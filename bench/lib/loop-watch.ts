/**
 * The bench's side of loop-watch.mjs: a server started with `watchEnv(dir)` reports its own
 * event loop (and, with `profile`, its main thread's CPU profile) per window; `mark()` ends a
 * window and returns what the loop did in it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./loop-watch.mjs', import.meta.url));

interface Spread {
  p99: number;
  max: number;
}

/**
 * The server's event loop over a window, per turn of a 5 ms timer (ms): the gap since its last
 * turn, the main thread's time on a CPU in that gap (its own work) and waiting for one.
 */
export interface LoopWindow {
  gap: Spread;
  cpu: Spread;
  wait: Spread;
  turns: number;
  /** The five gaps with the most CPU, each ending at `endUs` on the CPU profile's clock. */
  worst: Array<{ cpu: number; gap: number; endUs: number }>;
  /** The window's CPU profile, when profiling. */
  profile?: string;
}

export function watchEnv(dir: string, profile: boolean): NodeJS.ProcessEnv {
  const prior = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : '';
  return {
    NODE_OPTIONS: `${prior}--import=${PRELOAD}`,
    WARREN_BENCH_WATCH_DIR: dir,
    ...(profile ? { WARREN_BENCH_PROFILE: '1' } : {}),
  };
}

export class LoopWatch {
  private n = 0;
  constructor(
    private readonly pid: number,
    private readonly dir: string,
  ) {}

  /** End the current window (the server answers when its loop next turns). */
  async mark(): Promise<LoopWindow> {
    const n = ++this.n;
    process.kill(this.pid, 'SIGUSR2');
    const file = join(this.dir, `loop-${n}.json`);
    for (let waited = 0; !existsSync(file); waited += 20) {
      if (waited > 60_000) throw new Error(`the server wrote no ${file} in 60 s`);
      await sleep(20);
    }
    const prof = join(this.dir, `prof-${n}.cpuprofile`);
    return {
      ...(JSON.parse(readFileSync(file, 'utf8')) as LoopWindow),
      ...(existsSync(prof) ? { profile: prof } : {}),
    };
  }
}
