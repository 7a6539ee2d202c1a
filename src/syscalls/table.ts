import { type SyscallTable, tableOf } from './dispatch.ts';
import { eventSyscalls } from './events.ts';
import { ipcSyscalls } from './ipc.ts';
import { secretSyscalls } from './secrets.ts';
import { sessionSyscalls } from './sessions.ts';
import { streamSyscalls } from './streams.ts';
import type { Syscall } from './types.ts';
import { zoneSyscalls } from './zones.ts';

/** Every operation warren has. Surfaces are generated from this list. */
export const allSyscalls: readonly Syscall[] = [
  ...ipcSyscalls,
  ...sessionSyscalls,
  ...streamSyscalls,
  ...eventSyscalls,
  ...zoneSyscalls,
  ...secretSyscalls,
] as unknown as readonly Syscall[];

export const syscallTable = (): SyscallTable => tableOf(allSyscalls);
