import { z } from 'zod';
import { orchestrationPlugin } from '../../src/plugins/orchestration/plugin.ts';
import { definePlugin } from '../../src/plugins/types.ts';
import { defineSyscall } from '../../src/syscalls/types.ts';

/** The orchestration plugin with a stand-in `task_create`: what prompts look for to mention tasks. */
export const orchestrationWithTasks = definePlugin({
  ...orchestrationPlugin,
  syscalls: [
    defineSyscall({
      name: 'task_create',
      group: 'tasks',
      summary: 'stand-in',
      input: z.object({}),
      output: z.object({}),
      callers: ['operator', 'session'],
      tier: 1,
      handler: async () => ({}),
    }),
  ],
});
