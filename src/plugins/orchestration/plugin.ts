import { definePlugin } from '../../contract/plugin.ts';
import type { LogEvent } from '../../store/events.ts';
import { taskCompletions } from './completions.ts';
import { taskDirectory } from './directory.ts';
import { Engine } from './engine.ts';
import { inboxSyscalls } from './inbox-syscalls.ts';
import type { OrchestrationSelf } from './instance.ts';
import { orchestrationMigrations } from './migrations.ts';
import type { OrchestrationDb } from './schema.ts';
import { taskSyscalls } from './syscalls.ts';
import { TaskRooms } from './task-rooms.ts';
import { taskTargets } from './task-targets.ts';

/**
 * Orchestration: the task DAG on top of sessions. Dispatch spawns a session for each ready
 * task, joined to its parent task's session by a pipe; SIGCHLD, SIGTERM and adoption ride
 * the task tree; escalations reach an operator inbox. Disable it and warren is a session
 * manager. See docs/orchestration.md and docs/inbox.md.
 */
export const orchestrationPlugin = definePlugin<unknown, OrchestrationDb>({
  name: 'orchestration',
  version: '0.1.0',
  summary: 'tasks (a DAG), dispatch, SIGCHLD/SIGTERM over the task tree, escalation to an operator inbox',
  migrations: orchestrationMigrations,
  sessionTargets: 'a task id',
  syscalls: [...taskSyscalls, ...inboxSyscalls],
  completions: taskCompletions,
  async start({ kernel, tables, log, startContext }): Promise<OrchestrationSelf> {
    // Tasks: dispatch, status following, adoption (engine.ts); other plugins' start context
    // goes ahead of each session's first prompt.
    const engine = new Engine(kernel, tables, log, startContext);
    await engine.start();
    // Task ids as room targets; durable attachments follow each new session (task-rooms.ts).
    const rooms = new TaskRooms(kernel, tables, log);
    return {
      phases: [...engine.phases, rooms.phase],
      onCommit: (events: readonly LogEvent[]) => {
        engine.onCommit(events);
        rooms.onCommit(events);
      },
      targets: taskTargets(kernel, tables),
      engine,
      tables,
      // What plugins that depend on this one may know of tasks (directory.ts).
      tasks: taskDirectory(tables),
      async stop() {
        await rooms.stop();
        await engine.stop();
      },
    };
  },
});
