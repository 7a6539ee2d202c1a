import type { PluginInstance } from '../../contract/plugin.ts';
import type { TaskDirectory } from './directory.ts';
import type { Engine } from './engine.ts';
import type { Tables } from './schema.ts';

/** The orchestration plugin as a plugin that depends on it reaches it (`ctx.plugin('orchestration')`). */
export interface OrchestrationInstance extends PluginInstance {
  tasks: TaskDirectory;
}

/** As its own syscalls reach it (`ctx.self`): its engine and its tables as well. */
export interface OrchestrationSelf extends OrchestrationInstance {
  engine: Engine;
  tables: Tables;
}
