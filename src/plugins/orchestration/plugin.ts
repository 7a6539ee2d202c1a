import { definePlugin } from '../types.ts';
import { inboxSyscalls } from './inbox-syscalls.ts';
import { orchestrationMigrations } from './migrations.ts';
import { TaskRooms } from './task-rooms.ts';
import { taskTargets } from './task-targets.ts';

/**
 * Orchestration: the task DAG on top of sessions. Dispatch spawns a session for each ready
 * task, joined to its parent task's session by a pipe; SIGCHLD, SIGTERM and adoption ride
 * the task tree; escalations reach an operator inbox. Disable it and warren is a session
 * manager.
 */
export const orchestrationPlugin = definePlugin({
  name: 'orchestration',
  version: '0.1.0',
  summary: 'tasks (a DAG), dispatch, SIGCHLD/SIGTERM over the task tree, escalation to an operator inbox',
  migrations: orchestrationMigrations,
  sessionTargets: 'a task id',
  syscalls: [
    // --- inbox helper: escalations and the operator inbox (inbox-syscalls.ts) ---
    ...inboxSyscalls,
  ],
  start: ({ kernel }) => {
    // --- inbox helper: task ids as room targets; durable attachments follow each new session ---
    const rooms = new TaskRooms(kernel);
    return {
      phases: [rooms.phase],
      onCommit: (events) => rooms.onCommit(events),
      targets: taskTargets(kernel),
      stop: () => rooms.stop(),
    };
  },
});
