import { useRef } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { Status } from '../components/Status.tsx';
import { Usage } from '../components/Usage.tsx';
import { allPages, api } from '../lib/api.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import { useNeeds } from '../lib/needs.tsx';
import { Link, useRoute } from '../lib/router.tsx';
import { sessionState } from '../lib/state.ts';
import type { Session } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import { useFollow } from '../lib/useFollow.ts';
import { SessionActions } from './sessions/SessionActions.tsx';
import { TurnView } from './sessions/TurnView.tsx';
import { isPlumbing, pairTools, toTurns } from './sessions/turns.ts';
import { useSessionEvents } from './sessions/useSessionEvents.ts';

/** One session: its state, actions, and its transcript as turns, live, following the newest. */
export default function SessionPage({ id }: { id: string }) {
  const { path, search, navigate } = useRoute();
  const internals = search.get('internals') === '1';
  const { waiting } = useNeeds();
  const show = useFetch(
    () => api<{ session: Session }>('GET', `/v1/sessions/${encodeURIComponent(id)}`),
    [id],
  );
  // The live tree: what a kill would stop, counted for its confirmation.
  const live = useFetch(() => allPages<Session>('/v1/sessions', 'sessions'), [id]);
  useLiveRefetch(
    (e) => e.type.startsWith('session.') && (e.session_id === id || e.type !== 'session.output'),
    () => {
      show.reload();
      live.reload();
    },
    250,
  );
  const { events, error, more, loading, older } = useSessionEvents(id);
  const s = show.data?.session;
  const shown = internals ? events : events.filter((e) => !isPlumbing(e));
  const turns = toTurns(shown);
  const { results, claimed } = pairTools(shown);
  const end = useRef<HTMLDivElement>(null);
  useFollow(end, shown[shown.length - 1]?.seq);
  const toggle = (on: boolean) => {
    const p = new URLSearchParams(search);
    if (on) p.set('internals', '1');
    else p.delete('internals');
    navigate(`${path}${p.size ? `?${p}` : ''}`, true);
  };
  return (
    <div className="session-page pad">
      <p>
        <Link to="/sessions">← Sessions</Link>
      </p>
      <ErrorBox error={show.error} />
      {s ? (
        <>
          <h1>
            {s.title ?? s.id} <Status value={sessionState(s, waiting.has(s.id))} />
          </h1>
          <p className="muted">
            {s.id} · {s.runtime} · depth {s.depth} · parent{' '}
            {s.parentId ? <Link to={`/sessions/${s.parentId}`}>{s.parentId}</Link> : '—'} · subtree{' '}
            <Usage u={s.subtreeUsage} />
            {s.endReason ? ` · ended: ${s.endReason}` : ''}
            {s.activity ? ` · ${s.activity}` : ''} · <Link to={`/sessions/${s.id}/timeline`}>timeline</Link>
          </p>
          {s.endDetail ? <p className="end-detail wrap">{s.endDetail}</p> : null}
          <SessionActions
            session={s}
            sessions={[s, ...(live.data ?? []).filter((x) => x.id !== s.id)]}
            onDone={show.reload}
          />
        </>
      ) : null}
      <div className="toolbar flat">
        <label>
          <input type="checkbox" checked={internals} onChange={(e) => toggle(e.target.checked)} /> Show
          internals
        </label>
        <span className="muted">
          {turns.length} turns · {events.length - shown.length} internal events hidden
        </span>
      </div>
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
          <TurnView key={t.key} turn={t} index={i} results={results} claimed={claimed} />
        ))}
      </div>
      <div ref={end} />
    </div>
  );
}
