import type { Plugin } from '../contract/plugin.ts';
import { coordinatorPlugin } from '../plugins/coordinator/plugin.ts';
import { corePlugin } from '../plugins/core/plugin.ts';
import { groupsPlugin } from '../plugins/groups/plugin.ts';
import { knowledgePlugin } from '../plugins/knowledge/plugin.ts';
import { orchestrationPlugin } from '../plugins/orchestration/plugin.ts';
import { runnersPlugin } from '../plugins/runners/plugin.ts';
import { schedulingPlugin } from '../plugins/scheduling/plugin.ts';
import { turnsPlugin } from '../plugins/turns/plugin.ts';

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
