import { useEffect, useRef } from 'react';
import { ApiError, api } from '../../lib/api.ts';
import { useLiveHub } from '../../lib/live.tsx';
import type { Session, Task } from '../../lib/types.ts';

/** More tasks than this changed in one window: one read of the whole list is cheaper. */
const MAX_TASKS_READ = 40;
/** Events are gathered this long from the first, then each task they name is read once. */
const WINDOW_MS = 300;

export interface TaskPage {
  tasks: Task[];
  deps: Map<string, string[]>;
  sessions: Map<string, Session>;
}

interface Loaded {
  data: TaskPage | null;
  set: (page: TaskPage) => void;
  reload: () => void;
}

/**
 * Keeps the loaded task list current from the live stream: each task a window of `task.*`
 * events names (`payload.task`) is read again alone (`task_show`: the task, its dependencies
 * and its latest session, whose subtree usage the list shows), instead of every task and every
 * session per event (issue 29, "live and light"). A task a read no longer finds is dropped.
 */
export function useLiveTasks(loaded: Loaded): void {
  const hub = useLiveHub();
  const ref = useRef(loaded);
  ref.current = loaded;
  useEffect(() => {
    const pending = new Map<string, string>(); // task id → zone
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const flush = async () => {
      const ids = [...pending];
      pending.clear();
      if (ids.length > MAX_TASKS_READ) return ref.current.reload();
      const read = await Promise.all(
        ids.map(([id, zone]) =>
          api<{ task: Task; dependsOn: string[]; session: Session | null }>(
            'GET',
            `/v1/tasks/${encodeURIComponent(id)}`,
            undefined,
            zone,
          ).then(
            (r) => r,
            // Gone (deleted): dropped. Any other failure keeps the row as it was.
            (e: unknown) => (e instanceof ApiError && e.status === 404 ? null : undefined),
          ),
        ),
      );
      const page = ref.current.data;
      if (stopped || !page) return;
      const tasks = new Map(page.tasks.map((t) => [t.id, t]));
      const deps = new Map(page.deps);
      const sessions = new Map(page.sessions);
      ids.forEach(([id], i) => {
        const r = read[i];
        if (r === null) {
          tasks.delete(id);
          deps.delete(id);
        } else if (r) {
          tasks.set(id, r.task);
          if (r.dependsOn.length > 0) deps.set(id, r.dependsOn);
          else deps.delete(id);
          if (r.session) sessions.set(r.session.id, r.session);
        }
      });
      ref.current.set({ tasks: [...tasks.values()], deps, sessions });
    };
    const off = hub.subscribe((e) => {
      const id = e.type.startsWith('task.') ? e.payload?.task : undefined;
      if (typeof id !== 'string') return;
      pending.set(id, e.zone);
      timer ??= setTimeout(() => {
        timer = undefined;
        void flush();
      }, WINDOW_MS);
    });
    return () => {
      stopped = true;
      off();
      clearTimeout(timer);
    };
  }, [hub]);
}
