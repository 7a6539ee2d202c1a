/**
 * Who used the machine's CPUs over a window (Linux `/proc`, 10 ms ticks): the whole machine,
 * the benched server process (all its threads), this bench process, and the rest — other
 * work on a shared machine, which a figure measured there carries.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export interface CpuMark {
  at: number;
  machineBusy: number;
  serverTicks: number;
  benchUs: number;
}

/** In cores (1 = one CPU busy for the whole window). */
export interface CpuShare {
  cores: number;
  machine: number;
  server: number;
  bench: number;
  other: number;
}

const TICK_MS = 10;

export function cpuMark(serverPid: number): CpuMark {
  // cpu  user nice system idle iowait irq softirq steal …
  const all = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const busy = all.reduce((a, b) => a + b, 0) - all[3]! - all[4]!;
  const stat = readFileSync(`/proc/${serverPid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are the 14th and 15th fields; the slice starts at the 3rd.
  const serverTicks = Number(fields[11]) + Number(fields[12]);
  const { user, system } = process.cpuUsage();
  return { at: performance.now(), machineBusy: busy, serverTicks, benchUs: user + system };
}

export function cpuShare(from: CpuMark, to: CpuMark): CpuShare {
  const ms = to.at - from.at;
  const cores = (x: number) => Math.round((x / ms) * 100) / 100;
  const machine = cores((to.machineBusy - from.machineBusy) * TICK_MS);
  const server = cores((to.serverTicks - from.serverTicks) * TICK_MS);
  const bench = cores((to.benchUs - from.benchUs) / 1000);
  return {
    cores: cpus().length,
    machine,
    server,
    bench,
    other: Math.max(0, Math.round((machine - server - bench) * 100) / 100),
  };
}
