import { readFileSync } from 'node:fs';

/**
 * When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat), as a
 * string: with the pid it names one process even after the pid is reused. Null where /proc
 * is missing (not Linux) or the process is gone.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command name) is in parentheses and may hold spaces or ')': split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // `rest` starts at field 3, so field 22 is rest[19].
    const start = rest[19];
    return start && /^\d+$/.test(start) ? start : null;
  } catch {
    return null;
  }
}
