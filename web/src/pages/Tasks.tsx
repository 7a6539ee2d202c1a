import { ErrorBox } from '../components/ErrorBox.tsx';
import { ListToolbar, matches, useListView } from '../components/ListToolbar.tsx';
import { Status } from '../components/Status.tsx';
import { Usage } from '../components/Usage.tsx';
import { VirtualList } from '../components/VirtualList.tsx';
import { allPages, api } from '../lib/api.ts';
import { clip } from '../lib/format.ts';
import { Link, useRoute } from '../lib/router.tsx';
import type { Session, Task } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import { TaskActions } from './tasks/TaskActions.tsx';
import TaskGraph from './tasks/TaskGraph.tsx';
import { type TaskPage, useLiveTasks } from './tasks/useLiveTasks.ts';

type Listed = Task & { dependsOn?: string[] };

const STATUSES = ['pending', 'ready', 'running', 'waiting', 'review', 'complete', 'failed', 'cancelled'];
const FILTERS = [{ value: '', label: 'any status' }, ...STATUSES.map((s) => ({ value: s, label: s }))];
const SORTS = [
  { value: 'newest', label: 'newest' },
  { value: 'oldest', label: 'oldest' },
  { value: 'title', label: 'title' },
  { value: 'cost', label: 'subtree cost' },
];

/** The tree's root, then every task with its dependencies (task_list carries them); sessions for their usage. */
async function load(): Promise<TaskPage> {
  const [tree, rest, sessions] = await Promise.all([
    api<{ tree: { task: Task } }>('GET', '/v1/tasks/tree'),
    allPages<Listed>('/v1/tasks', 'tasks'),
    allPages<Session>('/v1/sessions', 'sessions', { all: true }),
  ]);
  const tasks = [tree.tree.task, ...rest.filter((t) => t.id !== tree.tree.task.id)];
  const deps = new Map<string, string[]>();
  for (const t of rest) if (t.dependsOn?.length) deps.set(t.id, t.dependsOn);
  return { tasks, deps, sessions: new Map(sessions.map((s) => [s.id, s])) };
}

/** Tasks as a list (search, status filter, sort, actions) or as the DAG (?view=graph). */
export default function Tasks() {
  const { search, navigate } = useRoute();
  const view = useListView({ sort: 'newest' });
  const graph = search.get('view') === 'graph';
  const data = useFetch(load, []);
  useLiveTasks(data);
  const d = data.data;
  const usageOf = (t: Task) => (t.sessionId ? d?.sessions.get(t.sessionId)?.subtreeUsage : undefined);
  const rows = (d?.tasks ?? [])
    .filter((t) => !view.filter || t.status === view.filter)
    .filter((t) => matches(view.q, t.title, t.id, t.status, t.result, t.reason))
    .sort((a, b) =>
      view.sort === 'title'
        ? a.title.localeCompare(b.title)
        : view.sort === 'oldest'
          ? a.createdAt - b.createdAt
          : view.sort === 'cost'
            ? (usageOf(b)?.costUsd ?? 0) - (usageOf(a)?.costUsd ?? 0)
            : b.createdAt - a.createdAt,
    );
  const setView = (g: boolean) => {
    const p = new URLSearchParams(search);
    if (g) p.set('view', 'graph');
    else p.delete('view');
    navigate(`/tasks${p.size ? `?${p}` : ''}`, true);
  };
  return (
    <div className="tasks">
      <ListToolbar
        view={view}
        label="tasks"
        filters={FILTERS}
        sorts={SORTS}
        count={d ? `${rows.length} of ${d.tasks.length} tasks` : 'Loading…'}
      >
        <fieldset aria-label="View" className="toggle">
          <button type="button" aria-pressed={!graph} onClick={() => setView(false)}>
            List
          </button>
          <button type="button" aria-pressed={graph} onClick={() => setView(true)}>
            Graph
          </button>
        </fieldset>
        {graph ? (
          <span className="legend">
            solid: parent → child · dashed: dependency → dependent · colour: status
          </span>
        ) : null}
      </ListToolbar>
      <ErrorBox error={data.error} />
      {!d ? null : graph ? (
        <TaskGraph tasks={d.tasks} deps={d.deps} onOpen={(id) => navigate(`/tasks/${id}`)} />
      ) : (
        <>
          <div className="thead task-row">
            <span>task</span>
            <span>status</span>
            <span>subtree usage</span>
            <span>result / reason</span>
            <span>actions</span>
          </div>
          <VirtualList
            label="Tasks"
            height="calc(100vh - 160px)"
            rowHeight={38}
            items={rows}
            keyOf={(t) => t.id}
            row={(t) => (
              <div className="task-row" data-task={t.id}>
                <span className="ellipsis">
                  <Link to={`/tasks/${t.id}`}>{t.title}</Link> <small className="muted">{t.id}</small>
                </span>
                <span className="ellipsis">
                  <Status value={t.held && t.status === 'pending' ? 'held' : t.status} />
                </span>
                <span className="ellipsis muted">
                  <Usage u={usageOf(t)} />
                </span>
                <span className="ellipsis muted">{clip(t.result ?? t.reason, 120)}</span>
                <span className="ellipsis">
                  <TaskActions task={t} onDone={data.reload} />
                </span>
              </div>
            )}
          />
        </>
      )}
    </div>
  );
}
