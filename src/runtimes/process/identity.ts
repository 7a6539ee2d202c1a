import { readFileSync } from 'node:fs';

/** What a run records about an agent process group so a later run can find it again. */
export interface ProcessRecord {
  pid: number;
  /** The process group (the agent is its leader, so usually equal to `pid`). */
  pgid: number;
  /** Field 22 of /proc/<pid>/stat: with the pid, an identity that survives pid reuse. */
  startTime: string;
  /** The boot it was recorded in; a process of another boot is never alive. */
  bootId?: string | null;
}

/** The start time of a process in clock ticks since boot (as text), or null if it is gone. */
export function processStartTime(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // comm (field 2) is in parentheses and may itself hold spaces and parens: the last ')' ends it.
  const close = stat.lastIndexOf(')');
  if (close < 0) return null;
  const fields = stat.slice(close + 2).split(' ');
  // fields[0] is field 3 (state), so field 22 is fields[19].
  const start = fields[19];
  if (fields[0] === 'Z' || !start || !/^\d+$/.test(start)) return null;
  return start;
}

/** This boot's id, or null where /proc does not say. */
export function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Whether `pid` is still the process that was recorded (not a later one that reused the pid). */
export function isSameProcess(rec: { pid: number; startTime: string; bootId?: string | null }): boolean {
  if (rec.bootId && rec.bootId !== bootId()) return false;
  const now = processStartTime(rec.pid);
  return now !== null && now === rec.startTime;
}

/**
 * SIGKILL a recorded process group, only if its leader is still the recorded process.
 * Returns whether it signalled anything.
 */
export function killRecordedGroup(rec: ProcessRecord): boolean {
  if (!isSameProcess(rec) || !Number.isInteger(rec.pgid) || rec.pgid <= 1) return false;
  try {
    process.kill(-rec.pgid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
