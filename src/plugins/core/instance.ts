import type { PluginDirectory, PluginInstance } from '../../contract/plugin.ts';
import type { SyscallContext } from '../../contract/syscall.ts';

/** What the core plugin's syscalls reach through `ctx.self`: the directory of loaded plugins. */
export interface CoreInstance extends PluginInstance {
  directory: PluginDirectory;
}

/** The host hands each syscall its own plugin's instance; core's is a CoreInstance. */
export const directoryOf = (ctx: Pick<SyscallContext, 'self'>): PluginDirectory =>
  (ctx.self as CoreInstance).directory;
