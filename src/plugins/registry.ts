import { coordinatorPlugin } from './coordinator/plugin.ts';
import { corePlugin } from './core.ts';
import { groupsPlugin } from './groups/plugin.ts';
import { knowledgePlugin } from './knowledge/plugin.ts';
import { orchestrationPlugin } from './orchestration/plugin.ts';
import { runnersPlugin } from './runners/plugin.ts';
import { schedulingPlugin } from './scheduling/plugin.ts';
import { turnsPlugin } from './turns/plugin.ts';
import type { Plugin } from './types.ts';

/** Every plugin this build ships, core first. Which load is the database's call (enablement.ts). */
export const builtinPlugins = (): Plugin[] =>
  [
    corePlugin,
    orchestrationPlugin,
    knowledgePlugin,
    schedulingPlugin,
    groupsPlugin,
    runnersPlugin,
    coordinatorPlugin,
    turnsPlugin,
  ] as Plugin[];
