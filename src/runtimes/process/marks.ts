import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';

/**
 * Every agent process carries `WARREN_AGENT_MARK=<run>.<group>` in its environment, and its
 * descendants inherit it, even those that leave the process group with setsid. A /proc scan
 * for the mark finds them at kill time, and finds a crashed run's survivors at startup.
 */
export const MARK_VAR = 'WARREN_AGENT_MARK';

const RUN = /^[A-Za-z0-9_-]{1,64}$/;

/** A fresh mark for one process group of run `run`. */
export function newMark(run: string): string {
  if (!RUN.test(run)) throw new Error(`bad run prefix ${JSON.stringify(run)}: letters, digits, _ and - only`);
  return `${run}.${randomBytes(6).toString('hex')}`;
}

/** Match one group's mark exactly, or every mark of a run. */
export type MarkQuery = { mark: string } | { run: string };

const needle = (q: MarkQuery) => ('mark' in q ? `\0${MARK_VAR}=${q.mark}\0` : `\0${MARK_VAR}=${q.run}.`);

/** Pids of live processes whose environment carries the mark (never this process). */
export async function markedPids(q: MarkQuery): Promise<number[]> {
  const want = needle(q);
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const pids = entries.map(Number).filter((pid) => Number.isInteger(pid) && pid > 1 && pid !== process.pid);
  const hits = await Promise.all(
    pids.map(async (pid) => {
      try {
        return `\0${await readFile(`/proc/${pid}/environ`, 'latin1')}`.includes(want);
      } catch {
        return false; // gone, or not ours to read
      }
    }),
  );
  return pids.filter((_, i) => hits[i]);
}

/**
 * Signal every marked process; rescan a few times so a forking one does not slip past.
 * Returns how many distinct processes it signalled (a killed one may show in the next scan
 * until it is reaped: it is not counted twice).
 */
export async function signalMarked(q: MarkQuery, signal: NodeJS.Signals): Promise<number> {
  const signalled = new Set<number>();
  for (let round = 0; round < 3; round++) {
    const pids = await markedPids(q);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
        signalled.add(pid);
      } catch {}
    }
    if (signal !== 'SIGKILL') break;
  }
  return signalled.size;
}
