import type { Syscall } from '../contract/syscall.ts';
import { type SyscallTable, tableOf } from './dispatch.ts';
import { syscallsOf } from './host.ts';
import { builtinPlugins } from './plugins.ts';

/**
 * Every operation this build has, of every plugin, loaded or not: what the CLI's manifest,
 * the reference and the config's tier check are made from. A running warren's table holds
 * only its loaded plugins' (PluginHost.table).
 */
export const allSyscalls: readonly Syscall[] = syscallsOf(builtinPlugins());

export const syscallTable = (): SyscallTable => tableOf(allSyscalls);
