import { readdirSync, readFileSync } from 'node:fs';

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

/** Linux: each thread of this process by its id, with its nice value (threads keep their own). */
export function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command's closing parenthesis start at the 3rd; nice is the 19th.
      nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nices;
}

/** The nice values of the threads that are in `after` and not in `before`. */
export const newThreadNices = (before: Map<number, number>, after: Map<number, number>): number[] =>
  [...after].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice);

/** Every process of a process group (a CLI agent leads its own). */
export function groupOf(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) out.push(Number(name));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** A live process's environment, as /proc shows it. */
/** A file of /proc/<pid> as text; empty when the process ended meanwhile (a CLI's short-lived helpers). */
export function procFile(pid: number, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}

export const environOf = (pid: number): Record<string, string> =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
