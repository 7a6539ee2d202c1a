import { definePlugin } from '../../contract/plugin.ts';
import type { LogEvent } from '../../store/events.ts';
import { taskCompletions } from './completions.ts';
import { Engine } from './engine.ts';
import { inboxSyscalls } from './inbox-syscalls.ts';
import { orchestrationMigrations } from './migrations.ts';
import { taskSyscalls } from './syscalls.ts';
import { TaskRooms } from './task-rooms.ts';
import { taskTargets } from './task-targets.ts';

/**
 * Orchestration: the task DAG on top of sessions. Dispatch spawns a session for each ready
 * task, joined to its parent task's session by a pipe; SIGCHLD, SIGTERM and adoption ride
 * the task tree; escalations reach an operator inbox. Disable it and warren is a session
 * manager. See docs/orchestration.md and docs/inbox.md.
 */
export const orchestrationPlugin = definePlugin({
  name: 'orchestration',
  version: '0.1.0',
  summary: 'tasks (a DAG), dispatch, SIGCHLD/SIGTERM over the task tree, escalation to an operator inbox',
  migrations: orchestrationMigrations,
  sessionTargets: 'a task id',
  syscalls: [...taskSyscalls, ...inboxSyscalls],
  completions: taskCompletions,
  async start({ kernel, log, startContext }) {
    // Tasks: dispatch, status following, adoption (engine.ts); other plugins' start context
    // goes ahead of each session's first prompt.
    const engine = new Engine(kernel, log, startContext);
    await engine.start();
    // Task ids as room targets; durable attachments follow each new session (task-rooms.ts).
    const rooms = new TaskRooms(kernel, log);
    return {
      phases: [...engine.phases, rooms.phase],
      onCommit: (events: readonly LogEvent[]) => {
        engine.onCommit(events);
        rooms.onCommit(events);
      },
      targets: taskTargets(kernel),
      engine,
      async stop() {
        await rooms.stop();
        await engine.stop();
      },
    };
  },
});
