/** Agent processes: how they are found, started, held and stopped (see docs/security.md). */

export { LifelineDeadline } from './process/deadline.ts';
export { commandLine, requireExecutable, resolveExecutable, splitCommandLine } from './process/exec.ts';
export {
  type AgentGroup,
  agentGroup,
  groupRecord,
  killGroup,
  type SpawnGroupOptions,
  spawnGroup,
} from './process/group.ts';
export {
  bootId,
  isSameProcess,
  killRecordedGroup,
  type ProcessRecord,
  processStartTime,
} from './process/identity.ts';
export { onLines, Tail } from './process/io.ts';
export { MARK_VAR, markedPids } from './process/marks.ts';
export { killRun } from './process/sweep.ts';
