import { useState } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { ListToolbar, matches, useListView } from '../components/ListToolbar.tsx';
import { Status } from '../components/Status.tsx';
import { allPages, api } from '../lib/api.ts';
import { dateTime, duration } from '../lib/format.ts';
import { arrowRows } from '../lib/keys.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import { Link } from '../lib/router.tsx';
import type { Schedule } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';

interface Fire {
  id: string;
  firedAt: number;
  manual: boolean;
  status: string;
  target: string | null;
  error: string | null;
}

const FILTERS = [
  { value: '', label: 'all' },
  { value: 'enabled', label: 'enabled' },
  { value: 'paused', label: 'paused' },
];
const SORTS = [
  { value: 'next', label: 'next fire' },
  { value: 'name', label: 'name' },
  { value: 'created', label: 'newest' },
];

const when = (s: Schedule) =>
  s.cron
    ? `cron ${s.cron}${s.tz ? ` ${s.tz}` : ''}`
    : s.intervalMs
      ? `every ${duration(s.intervalMs)}`
      : s.at
        ? `at ${dateTime(s.at)}`
        : s.kind;

const actionOf = (s: Schedule) => {
  const a = s.action;
  const kind = typeof a.kind === 'string' ? a.kind : (Object.keys(a)[0] ?? '—');
  const inner = a[kind] as { title?: string; name?: string; stream?: string } | undefined;
  const what = inner?.title ?? inner?.name ?? inner?.stream;
  return what ? `${kind}: ${what}` : kind;
};

/** Pause / resume / run now: one syscall each, none destructive, so no confirmation. */
function ScheduleActions({ s, onDone }: { s: Schedule; onDone: () => void }) {
  const [error, setError] = useState<Error | null>(null);
  const run = (verb: 'pause' | 'resume' | 'run') =>
    api('POST', `/v1/schedules/${encodeURIComponent(s.id)}/${verb}`, {}).then(
      () => {
        setError(null);
        onDone();
      },
      (e: Error) => setError(e),
    );
  return (
    <span className="inline-actions">
      {s.enabled ? (
        <button type="button" onClick={() => void run('pause')}>
          Pause
        </button>
      ) : (
        <button type="button" onClick={() => void run('resume')}>
          Resume
        </button>
      )}
      <button type="button" onClick={() => void run('run')}>
        Run now
      </button>
      <ErrorBox error={error} />
    </span>
  );
}

/** One schedule's latest fires (schedule_show), under its row when opened by its link. */
function Fires({ id }: { id: string }) {
  const r = useFetch(
    () => api<{ fires: Fire[] }>('GET', `/v1/schedules/${encodeURIComponent(id)}?fires=20`),
    [id],
  );
  useLiveRefetch((e) => e.type.startsWith('schedule.'), r.reload, 300);
  return (
    <section className="card" aria-label="Fires">
      <h3>Latest fires</h3>
      <ErrorBox error={r.error} />
      <ul className="plain">
        {(r.data?.fires ?? []).map((f) => (
          <li key={f.id}>
            <Status value={f.status} /> {dateTime(f.firedAt)}{' '}
            {f.manual ? <small className="muted">manual</small> : null}{' '}
            {f.target ? <TargetLink id={f.target} /> : null}{' '}
            {f.error ? <span className="muted">{f.error}</span> : null}
          </li>
        ))}
        {r.data && !r.data.fires.length ? <li className="muted">never fired</li> : null}
      </ul>
    </section>
  );
}

const TargetLink = ({ id }: { id: string }) => (
  <Link to={id.startsWith('task_') ? `/tasks/${id}` : `/sessions/${id}`}>{id}</Link>
);

/** The scheduling plugin's schedules: search, filter, sort; pause, resume, run now; `/schedules/:id` opens one. */
export default function Schedules({ id }: { id?: string | undefined }) {
  const view = useListView({ sort: 'next' });
  const list = useFetch(() => allPages<Schedule>('/v1/schedules', 'schedules'), []);
  useLiveRefetch((e) => e.type.startsWith('schedule.'), list.reload, 300);
  const all = list.data ?? [];
  const rows = all
    .filter((s) => (view.filter === 'enabled' ? s.enabled : view.filter === 'paused' ? !s.enabled : true))
    .filter((s) => matches(view.q, s.name, s.id, s.cron, actionOf(s), s.createdBy))
    .sort((a, b) =>
      view.sort === 'name'
        ? a.name.localeCompare(b.name)
        : view.sort === 'created'
          ? b.createdAt - a.createdAt
          : (a.nextFireAt ?? Number.POSITIVE_INFINITY) - (b.nextFireAt ?? Number.POSITIVE_INFINITY),
    );
  return (
    <div className="pad schedules">
      <ListToolbar
        view={view}
        label="schedules"
        filters={FILTERS}
        sorts={SORTS}
        count={`${rows.length} of ${all.length} schedules`}
      />
      <ErrorBox error={list.error} />
      <table className="grid" aria-label="Schedules">
        <thead>
          <tr>
            <th>state</th>
            <th>name</th>
            <th>when</th>
            <th>action</th>
            <th>next fire</th>
            <th>fires</th>
            <th>last</th>
            <th />
          </tr>
        </thead>
        <tbody onKeyDown={(e) => arrowRows(e)}>
          {rows.map((s) => (
            <tr
              key={s.id}
              data-row
              tabIndex={-1}
              data-schedule={s.name}
              className={s.id === id ? 'selected' : undefined}
            >
              <td>
                <Status value={s.enabled ? 'enabled' : 'paused'} />
              </td>
              <td>
                <Link to={`/schedules/${s.id}`}>{s.name}</Link>
              </td>
              <td className="muted">{when(s)}</td>
              <td>{actionOf(s)}</td>
              <td className="muted">{s.nextFireAt ? dateTime(s.nextFireAt) : '—'}</td>
              <td>{s.fires}</td>
              <td>{s.lastOutcome ? <Status value={s.lastOutcome} /> : <span className="muted">—</span>}</td>
              <td>
                <ScheduleActions s={s} onDone={list.reload} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && !all.length ? <p className="muted">No schedules.</p> : null}
      {id ? <Fires id={id} /> : null}
    </div>
  );
}
