import { lazy, Suspense, useEffect, useRef } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { matches } from '../components/ListToolbar.tsx';
import { allPages } from '../lib/api.ts';
import { useLiveEvents } from '../lib/live.tsx';
import { useRoute } from '../lib/router.tsx';
import { isInternal, type LogEvent, type Session, type Stream, type Task } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import { groupStreams, type Inventory } from './coordination/model.ts';
import { CreateRoom } from './coordination/RoomControls.tsx';
import { applyRoster, ROSTER_EVENTS } from './coordination/roster.ts';
import { StreamDrawer } from './coordination/StreamDrawer.tsx';
import { StreamList } from './coordination/StreamList.tsx';

const StreamGraph = lazy(() => import('./coordination/StreamGraph.tsx'));

/** Tasks are the orchestration plugin's: without it, streams group by session. */
const tasksOrNone = () => allPages<Task>('/v1/tasks', 'tasks').catch(() => [] as Task[]);

async function loadInventory(): Promise<Inventory> {
  const [streams, sessions, tasks] = await Promise.all([
    allPages<Stream>('/v1/streams', 'streams', { internal: true }),
    allPages<Session>('/v1/sessions', 'sessions'),
    tasksOrNone(),
  ]);
  return { streams, sessions, tasks };
}

const STREAM_SORTS = [
  { value: 'name', label: 'by name' },
  { value: 'newest', label: 'newest first' },
  { value: 'members', label: 'most members' },
];

/** The order of streams within each group (groups themselves stay by label). */
function sortStreams(streams: Stream[], sort: string): Stream[] {
  const by =
    sort === 'newest'
      ? (a: Stream, b: Stream) => b.createdAt - a.createdAt
      : sort === 'members'
        ? (a: Stream, b: Stream) =>
            b.subscribers.length - a.subscribers.length || a.name.localeCompare(b.name)
        : (a: Stream, b: Stream) => a.name.localeCompare(b.name);
  return [...streams].sort(by);
}

export function Coordination() {
  const { search, navigate } = useRoute();
  const view = search.get('view') === 'graph' ? 'graph' : 'list';
  const internals = search.get('internals') === '1';
  const selected = search.get('stream');
  const inv = useFetch(loadInventory, []);
  useRoster(inv.set);
  const set = (k: string, v: string | null) => {
    const p = new URLSearchParams(search);
    if (v === null) p.delete(k);
    else p.set(k, v);
    const q = p.toString();
    navigate(`/coordination${q ? `?${q}` : ''}`, true);
  };
  const data = inv.data;
  const q = search.get('q') ?? '';
  const sort = search.get('sort') ?? 'name';
  const visible = data
    ? sortStreams(
        data.streams.filter((s) => (internals || !isInternal(s)) && matches(q, s.name, s.id, s.owner)),
        sort,
      )
    : [];
  const open = data?.streams.find((s) => s.id === selected || s.name === selected) ?? null;
  return (
    <div className="coordination">
      <div className="toolbar">
        <input
          type="search"
          data-search
          aria-label="Search streams"
          placeholder="search streams…  (/)"
          value={q}
          onChange={(e) => set('q', e.target.value || null)}
        />
        <select aria-label="Sort streams" value={sort} onChange={(e) => set('sort', e.target.value)}>
          {STREAM_SORTS.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
        <fieldset aria-label="View" className="toggle">
          <button type="button" aria-pressed={view === 'list'} onClick={() => set('view', null)}>
            List
          </button>
          <button type="button" aria-pressed={view === 'graph'} onClick={() => set('view', 'graph')}>
            Graph
          </button>
        </fieldset>
        <label>
          <input
            type="checkbox"
            checked={internals}
            onChange={(e) => set('internals', e.target.checked ? '1' : null)}
          />{' '}
          Show internals
        </label>
        <button type="button" onClick={inv.reload}>
          Refresh
        </button>
        <span className="muted">
          {visible.length} streams ·{' '}
          {data?.sessions.filter((s) => s.status !== 'stopped' && s.id !== 'init').length ?? 0} live sessions
        </span>
        <CreateRoom onCreated={(id) => set('stream', id)} />
      </div>
      <ErrorBox error={inv.error} />
      <div className={`split${open ? ' with-drawer' : ''}`}>
        <div className="pane">
          {!data ? (
            <p className="pad">Loading…</p>
          ) : view === 'list' ? (
            <StreamList
              groups={groupStreams(data, visible)}
              selected={open?.id ?? null}
              onSelect={(id) => set('stream', id)}
            />
          ) : (
            <Suspense fallback={<p className="pad">Loading graph…</p>}>
              <StreamGraph
                streams={visible}
                sessions={data.sessions}
                tasks={data.tasks}
                onSelect={(id) => set('stream', id)}
              />
            </Suspense>
          )}
        </div>
        {open && data ? (
          <StreamDrawer
            stream={open}
            sessions={data.sessions}
            onClose={() => set('stream', null)}
            onChanged={inv.reload}
          />
        ) : null}
      </div>
    </div>
  );
}

/**
 * Live roster events applied to the loaded inventory (roster.ts), batched per animation
 * frame; task events refetch the task list only. Before the first load they are dropped:
 * the load that is under way reads the state they made.
 */
function useRoster(set: (fn: (inv: Inventory | null) => Inventory | null) => void) {
  const pending = useRef<LogEvent[]>([]);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  useLiveEvents(
    (e) => ROSTER_EVENTS.test(e.type),
    (e) => {
      pending.current.push(e);
      if (timer.current !== undefined) return;
      timer.current = setTimeout(() => {
        timer.current = undefined;
        const batch = pending.current;
        pending.current = [];
        set((inv) => (inv ? applyRoster(inv, batch) : inv));
        if (batch.some((e) => e.type.startsWith('task.')))
          void tasksOrNone().then((t) => set((inv) => (inv ? { ...inv, tasks: t } : inv)));
      }, 100);
    },
  );
}
