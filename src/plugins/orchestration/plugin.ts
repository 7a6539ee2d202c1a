import { definePlugin } from '../types.ts';
import { Engine } from './engine.ts';
import { orchestrationMigrations } from './migrations.ts';
import { taskSyscalls } from './syscalls.ts';

/**
 * Orchestration: the task DAG on top of sessions. Dispatch spawns a session for each ready
 * task, joined to its parent task's session by a pipe; SIGCHLD, SIGTERM and adoption ride
 * the task tree; escalations reach an operator inbox. Disable it and warren is a session
 * manager. See docs/orchestration.md.
 */
export const orchestrationPlugin = definePlugin({
  name: 'orchestration',
  version: '0.1.0',
  summary: 'tasks (a DAG), dispatch, SIGCHLD/SIGTERM over the task tree, escalation to an operator inbox',
  migrations: orchestrationMigrations,
  syscalls: taskSyscalls,
  async start({ kernel }) {
    const engine = new Engine(kernel);
    await engine.start();
    return engine;
  },
});
