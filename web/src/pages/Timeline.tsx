import { useEffect, useMemo, useState } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { allPages, api, qs } from '../lib/api.ts';
import { useLiveEvents } from '../lib/live.tsx';
import { Link } from '../lib/router.tsx';
import type { LogEvent, Session, Task } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import { buildLanes, treeOrder } from './timeline/lanes.ts';
import { TimelineChart } from './timeline/TimelineChart.tsx';

/** Events read per session (its latest): a lane shows the recent past of a long session. */
const PER_SESSION = 1000;
/** Requests in flight at once while reading a tree's events. */
const PARALLEL = 6;
const LANE_TYPES = /^(session\.(status|input|output)|signal)$/;

async function load(kind: 'session' | 'task', id: string) {
  let root = id;
  let title = id;
  if (kind === 'task') {
    const t = await api<{ task: Task }>('GET', `/v1/tasks/${encodeURIComponent(id)}`);
    if (!t.task.sessionId) return { title: t.task.title, order: [], events: [] };
    root = t.task.sessionId;
    title = `task ${t.task.title}`;
  }
  const all = await allPages<Session>('/v1/sessions', 'sessions', { all: true });
  const order = treeOrder(all, root);
  if (kind === 'session') title = order[0]?.session.title ?? id;
  const events: LogEvent[] = [];
  const queue = order.map((o) => o.session.id);
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let s = queue.shift(); s; s = queue.shift()) {
        const r = await api<{ events: LogEvent[] }>(
          'GET',
          `/v1/events${qs({ session: s, limit: PER_SESSION })}`,
        );
        events.push(...r.events.filter((e) => LANE_TYPES.test(e.type)));
      }
    }),
  );
  return { title, order, events };
}

/** `/sessions/:id/timeline`, `/tasks/:id/timeline`: a session tree's lanes over time, live. */
export default function Timeline({ kind, id }: { kind: 'session' | 'task'; id: string }) {
  const data = useFetch(() => load(kind, id), [kind, id]);
  const [live, setLive] = useState<LogEvent[]>([]);
  const [now, setNow] = useState(() => Date.now());
  const ids = useMemo(() => new Set(data.data?.order.map((o) => o.session.id)), [data.data]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new load starts the live tail over
  useEffect(() => setLive([]), [data.data]);
  useLiveEvents(
    (e) => LANE_TYPES.test(e.type) && ids.has(String(e.type === 'signal' ? e.payload.target : e.session_id)),
    (e) => {
      setLive((prev) => [...prev, e]);
      setNow(Date.now());
    },
  );
  const lanes = useMemo(() => {
    if (!data.data) return [];
    const seen = new Set(data.data.events.map((e) => e.seq));
    return buildLanes(data.data.order, [...data.data.events, ...live.filter((e) => !seen.has(e.seq))], now);
  }, [data.data, live, now]);
  const back = kind === 'task' ? `/tasks/${id}` : `/sessions/${id}`;
  return (
    <div className="timeline-page">
      <div className="toolbar">
        <Link to={back}>← {kind}</Link>
        <strong>{data.data?.title ?? id}</strong>
        <span className="muted">{lanes.length} sessions</span>
        <span className="tl-legend muted">
          bars: state · <span className="tl-key-input">|</span> input · ● output · ◆ signal
        </span>
      </div>
      <ErrorBox error={data.error} />
      {!data.data ? (
        <p className="pad">Loading…</p>
      ) : lanes.length === 0 ? (
        <p className="pad muted">No sessions yet.</p>
      ) : (
        <TimelineChart lanes={lanes} now={now} height={window.innerHeight - 100} />
      )}
    </div>
  );
}
