import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { ListToolbar, matches, useListView } from '../components/ListToolbar.tsx';
import { VirtualList } from '../components/VirtualList.tsx';
import { api, qs } from '../lib/api.ts';
import { dateTime } from '../lib/format.ts';
import { useLiveEvents } from '../lib/live.tsx';
import { Link } from '../lib/router.tsx';
import type { LogEvent } from '../lib/types.ts';

const PAGE = 200;

interface Filters {
  type: string;
  session: string;
  stream: string;
  since: string;
  until: string;
}

const EMPTY: Filters = { type: '', session: '', stream: '', since: '', until: '' };
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** The action log: the CLI's filters, live tail at the top, older pages on demand. */
export default function Log() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [f, setF] = useState<Filters>(EMPTY);
  const [events, setEvents] = useState<LogEvent[]>([]);
  const [more, setMore] = useState(true);
  const [tail, setTail] = useState(true);
  const [error, setError] = useState<Error | null>(null);
  const page = useCallback(
    async (before?: number) => {
      try {
        const r = await api<{ events: LogEvent[] }>(
          'GET',
          `/v1/events${qs({
            type: f.type,
            session: f.session,
            stream: f.stream,
            since: iso(f.since),
            until: iso(f.until),
            before,
            limit: PAGE,
          })}`,
        );
        setEvents((prev) => {
          const seen = new Set(prev.map((e) => e.seq));
          const merged =
            before === undefined ? r.events : [...prev, ...r.events.filter((e) => !seen.has(e.seq))];
          return merged.sort((a, b) => b.seq - a.seq);
        });
        setMore(r.events.length === PAGE);
        setError(null);
      } catch (e) {
        setError(e as Error);
      }
    },
    [f],
  );
  useEffect(() => {
    setEvents([]);
    void page();
  }, [page]);
  useLiveEvents(
    (e) =>
      tail &&
      !f.until &&
      (!f.type || e.type === f.type) &&
      (!f.session || e.session_id === f.session) &&
      (!f.stream || e.stream_id === f.stream),
    (e) => setEvents((prev) => (prev.some((x) => x.seq === e.seq) ? prev : [e, ...prev])),
  );
  const view = useListView({ sort: 'newest' });
  const shown = events.filter((e) =>
    matches(view.q, e.type, e.actor, e.session_id, JSON.stringify(e.payload)),
  );
  if (view.sort === 'oldest') shown.reverse();
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setF(draft);
  };
  const field = (k: keyof Filters, label: string, type = 'text') => (
    <label>
      {label}{' '}
      <input
        type={type}
        value={draft[k]}
        aria-label={label}
        onChange={(e) => setDraft({ ...draft, [k]: e.target.value })}
      />
    </label>
  );
  return (
    <div className="log">
      <form className="toolbar" onSubmit={apply}>
        {field('type', 'Type')}
        {field('session', 'Session')}
        {field('stream', 'Stream')}
        {field('since', 'Since', 'datetime-local')}
        {field('until', 'Until', 'datetime-local')}
        <button type="submit">Apply</button>
        <label>
          <input type="checkbox" checked={tail} onChange={(e) => setTail(e.target.checked)} /> Live tail
        </label>
      </form>
      <ListToolbar
        view={view}
        label="loaded events"
        sorts={[
          { value: 'newest', label: 'newest first' },
          { value: 'oldest', label: 'oldest first' },
        ]}
        count={`${shown.length} of ${events.length} loaded`}
      />
      <ErrorBox error={error} />
      <div className="log-row thead">
        <span>seq</span>
        <span>time</span>
        <span>type</span>
        <span>actor</span>
        <span>session</span>
        <span>payload</span>
      </div>
      <VirtualList
        label="Events"
        height="calc(100vh - 240px)"
        items={shown}
        keyOf={(e) => String(e.seq)}
        row={(e) => (
          <div className="log-row" data-type={e.type} data-row tabIndex={-1}>
            <span className="muted">#{e.seq}</span>
            <span className="muted">{dateTime(e.ts)}</span>
            <span className="type ellipsis">{e.type}</span>
            <span className="muted ellipsis" data-col="actor">
              {e.actor}
            </span>
            <span className="ellipsis" data-col="session">
              {e.session_id ? (
                <Link to={`/sessions/${e.session_id}`}>{e.session_id}</Link>
              ) : (
                <span className="muted">—</span>
              )}
            </span>
            <span className="ellipsis">{JSON.stringify(e.payload)}</span>
          </div>
        )}
      />
      {more ? (
        <button type="button" onClick={() => void page(events[events.length - 1]?.seq)}>
          Older
        </button>
      ) : (
        <p className="muted">Start of the log.</p>
      )}
    </div>
  );
}
