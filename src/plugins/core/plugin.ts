import { definePlugin } from '../../contract/plugin.ts';
import { coreCompletions } from './completions.ts';
import type { CoreInstance } from './instance.ts';
import { corePrompts } from './prompts.ts';
import { coreResources } from './resources.ts';
import { coreSyscalls } from './syscalls.ts';

/**
 * The kernel proper: spawn, signals, the lifecycle and reaping model, delivery, the log.
 * Always loaded; its reconcile phases are the kernel's own and run first.
 */
export const corePlugin = definePlugin({
  name: 'core',
  version: '0.1.0',
  summary: 'sessions, streams and fds, delivery, signals, supervision, the log',
  required: true,
  syscalls: coreSyscalls,
  completions: coreCompletions,
  resources: coreResources,
  prompts: corePrompts,
  start: (ctx): CoreInstance => ({ directory: ctx.directory }),
});
