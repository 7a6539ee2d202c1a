import { readFileSync } from 'node:fs';

/**
 * Gone: no such process, or a zombie waiting for a reaper that is not us (in a container,
 * PID 1 may reap orphans late).
 */
export function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
