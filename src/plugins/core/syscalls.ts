import type { Syscall } from '../../contract/syscall.ts';
import { eventSyscalls } from './events.ts';
import { ipcSyscalls } from './ipc.ts';
import { keySyscalls } from './keys.ts';
import { personaSyscalls } from './personas.ts';
import { pluginSyscalls } from './plugins.ts';
import { secretSyscalls } from './secrets.ts';
import { sessionSyscalls } from './sessions.ts';
import { statusSyscalls } from './status.ts';
import { streamSyscalls } from './streams.ts';
import { zoneSyscalls } from './zones.ts';

/** The kernel's own operations: the `core` plugin's syscalls. */
export const coreSyscalls: readonly Syscall[] = [
  ...ipcSyscalls,
  ...sessionSyscalls,
  ...streamSyscalls,
  ...eventSyscalls,
  ...zoneSyscalls,
  ...secretSyscalls,
  ...personaSyscalls,
  ...pluginSyscalls,
  ...statusSyscalls,
  ...keySyscalls,
] as unknown as readonly Syscall[];
