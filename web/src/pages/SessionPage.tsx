import { ErrorBox } from '../components/ErrorBox.tsx';
import { Status } from '../components/Status.tsx';
import { api } from '../lib/api.ts';
import { usage } from '../lib/format.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import { Link } from '../lib/router.tsx';
import type { Session } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import { SessionActions } from './sessions/SessionActions.tsx';
import { TurnView } from './sessions/TurnView.tsx';
import { toTurns } from './sessions/turns.ts';
import { useSessionEvents } from './sessions/useSessionEvents.ts';

/** One session: its state, actions, and its transcript as turns, live. */
export default function SessionPage({ id }: { id: string }) {
  const show = useFetch(
    () => api<{ session: Session }>('GET', `/v1/sessions/${encodeURIComponent(id)}`),
    [id],
  );
  useLiveRefetch((e) => e.session_id === id && e.type.startsWith('session.'), show.reload, 250);
  const { events, error, more, loading, older } = useSessionEvents(id);
  const s = show.data?.session;
  const turns = toTurns(events);
  return (
    <div className="session-page pad">
      <p>
        <Link to="/sessions">← Sessions</Link>
      </p>
      <ErrorBox error={show.error} />
      {s ? (
        <>
          <h1>
            {s.title ?? s.id} <Status value={s.status} />
          </h1>
          <p className="muted">
            {s.id} · {s.runtime} · depth {s.depth} · parent{' '}
            {s.parentId ? <Link to={`/sessions/${s.parentId}`}>{s.parentId}</Link> : '—'} · {usage(s.usage)} ·{' '}
            <Link to={`/sessions/${s.id}/timeline`}>timeline</Link>
          </p>
          <SessionActions session={s} onDone={show.reload} />
        </>
      ) : null}
      <ErrorBox error={error} />
      {more ? (
        <p>
          <button type="button" onClick={older} disabled={loading}>
            Load older
          </button>
        </p>
      ) : null}
      <div className="turns" data-testid="turns">
        {turns.map((t, i) => (
          <TurnView key={t.key} turn={t} index={i} />
        ))}
      </div>
    </div>
  );
}
