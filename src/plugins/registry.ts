import { corePlugin } from './core.ts';
import { orchestrationPlugin } from './orchestration/plugin.ts';
import type { Plugin } from './types.ts';

/** Every plugin this build ships, core first. Which load is the database's call (enablement.ts). */
export const builtinPlugins = (): Plugin[] => [corePlugin, orchestrationPlugin] as Plugin[];
