import { api } from '../../lib/api.ts';
import { type Loaded, useLiveWindow } from '../../lib/liveWindow.ts';
import type { Session, Task } from '../../lib/types.ts';

/** Events are gathered this long from the first, then each task they name is read once. */
const WINDOW_MS = 300;

export interface TaskPage {
  tasks: Task[];
  deps: Map<string, string[]>;
  sessions: Map<string, Session>;
}

interface Shown {
  task: Task;
  dependsOn: string[];
  session: Session | null;
}

/**
 * Keeps the loaded task list current from the live stream (useLiveWindow): each task a window
 * of `task.*` events names (`payload.task`) is read again alone (`task_show`: the task, its
 * dependencies and its latest session, whose subtree usage the list shows), instead of every
 * task and every session per event. A task a read no longer finds is dropped.
 */
export function useLiveTasks(loaded: Loaded<TaskPage>): void {
  useLiveWindow<TaskPage, Shown>(
    loaded,
    {
      match: (e) => {
        const id = e.type.startsWith('task.') ? e.payload?.task : undefined;
        return typeof id === 'string' ? id : undefined;
      },
      read: (id, zone) => api<Shown>('GET', `/v1/tasks/${encodeURIComponent(id)}`, undefined, zone),
      apply: (page, reads) => {
        if (!page) return undefined;
        const tasks = new Map(page.tasks.map((t) => [t.id, t]));
        const deps = new Map(page.deps);
        const sessions = new Map(page.sessions);
        for (const [id, r] of reads) {
          if (r === null) {
            tasks.delete(id);
            deps.delete(id);
          } else {
            tasks.set(id, r.task);
            if (r.dependsOn.length > 0) deps.set(id, r.dependsOn);
            else deps.delete(id);
            if (r.session) sessions.set(r.session.id, r.session);
          }
        }
        return { tasks: [...tasks.values()], deps, sessions };
      },
    },
    WINDOW_MS,
  );
}
