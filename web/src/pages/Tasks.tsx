import { ErrorBox } from '../components/ErrorBox.tsx';
import { allPages, api } from '../lib/api.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import { useRoute } from '../lib/router.tsx';
import type { Task } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import TaskGraph from './tasks/TaskGraph.tsx';

type Listed = Task & { dependsOn?: string[] };

/** The tree's root, then every task with its dependencies (task_list carries them). */
async function load(): Promise<{ tasks: Task[]; deps: Map<string, string[]> }> {
  const tree = await api<{ tree: { task: Task } }>('GET', '/v1/tasks/tree');
  const rest = await allPages<Listed>('/v1/tasks', 'tasks');
  const tasks = [tree.tree.task, ...rest.filter((t) => t.id !== tree.tree.task.id)];
  const deps = new Map<string, string[]>();
  for (const t of rest) if (t.dependsOn?.length) deps.set(t.id, t.dependsOn);
  return { tasks, deps };
}

export default function Tasks() {
  const { navigate } = useRoute();
  const data = useFetch(load, []);
  useLiveRefetch((e) => e.type.startsWith('task.'), data.reload, 300);
  return (
    <div className="tasks">
      <div className="toolbar">
        <span className="muted">{data.data ? `${data.data.tasks.length} tasks` : 'Loading…'}</span>
        <span className="legend">
          solid: parent → child · dashed: dependency → dependent · colour: status
        </span>
      </div>
      <ErrorBox error={data.error} />
      {data.data ? (
        <TaskGraph tasks={data.data.tasks} deps={data.data.deps} onOpen={(id) => navigate(`/tasks/${id}`)} />
      ) : null}
    </div>
  );
}
