import type { ChildProcess } from 'node:child_process';
import { processStartTime } from './process.ts';
import type { AgentSink } from './types.ts';

/**
 * Report an agent process group to the kernel: `spawned` now (pid, its group, its start time,
 * read while it surely runs), `exited` once it is gone. Every agent leads its own group.
 */
export function trackGroup(child: ChildProcess, sink: AgentSink): void {
  const pid = child.pid;
  if (pid === undefined) return; // it never started: 'error' reports that
  sink.spawned({ pid, pgid: pid, startTime: processStartTime(pid) });
  child.once('exit', () => sink.exited(pid));
}
