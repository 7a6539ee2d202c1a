import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A cgroup per agent holds every descendant, whatever it does with sessions, groups or its
 * environment. Where cgroups are not writable (no root, no delegation) none is made, and
 * the process group and the mark carry on alone.
 */
export interface CgroupBase {
  version: 1 | 2;
  /** The directory of this process's own cgroup: agent cgroups are made under it. */
  dir: string;
}

/** Where this process's own cgroups are: v2 first, then v1's pids controller (none if not Linux). */
export function cgroupBases(): CgroupBase[] {
  let mounts: string;
  let own: string;
  try {
    mounts = readFileSync('/proc/self/mountinfo', 'utf8');
    own = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return [];
  }
  const mountOf = (test: (fstype: string, superOpts: string) => boolean): string | null => {
    for (const line of mounts.split('\n')) {
      const [pre, post] = line.split(' - ');
      if (!pre || !post) continue;
      const [fstype, , superOpts = ''] = post.split(' ');
      if (fstype && test(fstype, superOpts)) return pre.split(' ')[4] ?? null;
    }
    return null;
  };
  const pathOf = (controller: (c: string) => boolean): string | null => {
    for (const line of own.split('\n')) {
      const m = /^(\d+):([^:]*):(.*)$/.exec(line);
      if (m && controller(m[2]!)) return m[3]!;
    }
    return null;
  };
  const out: CgroupBase[] = [];
  const v2 = mountOf((t) => t === 'cgroup2');
  const v2path = pathOf((c) => c === '');
  if (v2 && v2path !== null) out.push({ version: 2, dir: join(v2, v2path) });
  const v1 = mountOf((t, o) => t === 'cgroup' && o.split(',').includes('pids'));
  const v1path = pathOf((c) => c.split(',').includes('pids'));
  if (v1 && v1path !== null) out.push({ version: 1, dir: join(v1, v1path) });
  return out;
}

/** Make the cgroup for one agent group in the first hierarchy that lets us; null if none does. */
export function makeCgroup(mark: string, bases = cgroupBases()): string | null {
  for (const base of bases) {
    const dir = join(base.dir, `warren-${mark}`);
    try {
      mkdirSync(dir);
      return dir;
    } catch {} // not writable here (no root, no delegation): try the next, else go without
  }
  return null;
}

export function cgroupPids(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((p) => Number.isInteger(p) && p > 0 && p !== process.pid);
  } catch {
    return [];
  }
}

/** Signal every member; for SIGKILL use v2's cgroup.kill when there is one, and repeat for forks. */
export function signalCgroup(dir: string, signal: NodeJS.Signals): number {
  // Counted as distinct processes: cgroup.kill ends them all at once and says nothing, so
  // its members are read first.
  const hit = new Set<number>();
  if (signal === 'SIGKILL') {
    const members = cgroupPids(dir);
    try {
      writeFileSync(join(dir, 'cgroup.kill'), '1');
      for (const pid of members) hit.add(pid);
    } catch {} // v1, or a kernel before 5.14
  }
  for (let round = 0; round < (signal === 'SIGKILL' ? 3 : 1); round++) {
    const pids = cgroupPids(dir);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
        hit.add(pid);
      } catch {}
    }
  }
  return hit.size;
}

/** Remove an agent cgroup once its members are gone (it may take the kernel a moment). */
export async function removeCgroup(dir: string, waitMs = 1000): Promise<boolean> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      rmdirSync(dir);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      if (code !== 'EBUSY' || Date.now() >= until) return false;
    }
    // Not unref'd: a caller awaiting this (a sweep, a stop) must not see the event loop end
    // under it; the wait is bounded by waitMs.
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The agent cgroups a run left behind (named `warren-<run>.<group>`). */
export async function runCgroups(run: string, bases = cgroupBases()): Promise<string[]> {
  const out: string[] = [];
  for (const base of bases) {
    try {
      const names = await readdir(base.dir);
      out.push(...names.filter((n) => n.startsWith(`warren-${run}.`)).map((n) => join(base.dir, n)));
    } catch {}
  }
  return out;
}

/**
 * Remove empty agent cgroups of any run that are older than `minAgeMs` (a server that died
 * cannot remove its own). A populated cgroup cannot be removed, so nothing live is touched;
 * the age keeps clear of one another server has just made and is about to join.
 */
export async function removeStaleCgroups(minAgeMs = 60_000, bases = cgroupBases()): Promise<number> {
  let removed = 0;
  for (const base of bases) {
    let names: string[];
    try {
      names = (await readdir(base.dir)).filter((n) => n.startsWith('warren-'));
    } catch {
      continue;
    }
    for (const name of names) {
      const dir = join(base.dir, name);
      try {
        if (Date.now() - (await stat(dir)).mtimeMs < minAgeMs || cgroupPids(dir).length > 0) continue;
        rmdirSync(dir);
        removed++;
      } catch {} // populated after all, or gone
    }
  }
  return removed;
}
