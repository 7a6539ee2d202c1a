import { ErrorBox } from '../components/ErrorBox.tsx';
import { Status } from '../components/Status.tsx';
import { Usage } from '../components/Usage.tsx';
import { api } from '../lib/api.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import { Link } from '../lib/router.tsx';
import { sessionState } from '../lib/state.ts';
import type { LogEvent, Session, Task } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import { TaskActions } from './tasks/TaskActions.tsx';
import { TaskKnowledge } from './tasks/TaskKnowledge.tsx';

interface Shown {
  task: Task & { prompt: string };
  dependsOn: string[];
  children: string[];
  session: Session | null;
}

/** One task: its prompt, result, dependencies, children, its sessions (from the task's log events), workpad and findings. */
export default function TaskPage({ id }: { id: string }) {
  const show = useFetch(() => api<Shown>('GET', `/v1/tasks/${encodeURIComponent(id)}`), [id]);
  const history = useFetch(
    () => api<{ events: LogEvent[] }>('GET', `/v1/events?type=task.dispatched&limit=1000`),
    [id],
  );
  useLiveRefetch((e) => e.type.startsWith('task.'), show.reload, 300);
  const d = show.data;
  const sessions = (history.data?.events ?? [])
    .filter((e) => e.payload.task === id || e.payload.taskId === id)
    .map((e) => String(e.payload.session ?? e.session_id ?? ''))
    .filter(Boolean);
  return (
    <div className="pad">
      <p>
        <Link to="/tasks">← Tasks</Link> · <Link to={`/tasks/${id}/timeline`}>timeline</Link>
      </p>
      <ErrorBox error={show.error} />
      {d ? (
        <>
          <h1>
            {d.task.title} <Status value={d.task.status} />
          </h1>
          <p className="muted">
            {d.task.id} · subtree <Usage u={d.session?.subtreeUsage} />
          </p>
          <TaskActions task={d.task} onDone={show.reload} />
          <h3>Prompt</h3>
          <pre className="block">{d.task.prompt}</pre>
          {d.task.result ? (
            <>
              <h3>Result</h3>
              <pre className="block">{d.task.result}</pre>
            </>
          ) : null}
          {d.task.reason ? <p>Reason: {d.task.reason}</p> : null}
          <h3>Depends on</h3>
          <ul>
            {d.dependsOn.length ? (
              d.dependsOn.map((t) => (
                <li key={t}>
                  <Link to={`/tasks/${t}`}>{t}</Link>
                </li>
              ))
            ) : (
              <li className="muted">nothing</li>
            )}
          </ul>
          <h3>Children</h3>
          <ul>
            {d.children.length ? (
              d.children.map((t) => (
                <li key={t}>
                  <Link to={`/tasks/${t}`}>{t}</Link>
                </li>
              ))
            ) : (
              <li className="muted">none</li>
            )}
          </ul>
          <h3>Sessions</h3>
          <ul>
            {d.session ? (
              <li>
                <Link to={`/sessions/${d.session.id}`}>{d.session.id}</Link>{' '}
                <Status value={sessionState(d.session)} /> (latest)
              </li>
            ) : null}
            {sessions
              .filter((s) => s !== d.session?.id)
              .map((s) => (
                <li key={s}>
                  <Link to={`/sessions/${s}`}>{s}</Link>
                </li>
              ))}
          </ul>
          <TaskKnowledge id={d.task.id} />
        </>
      ) : null}
    </div>
  );
}
