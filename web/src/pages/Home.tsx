import { ErrorBox } from '../components/ErrorBox.tsx';
import { EscalationCard } from '../components/EscalationCard.tsx';
import { Status } from '../components/Status.tsx';
import { Usage } from '../components/Usage.tsx';
import { clip, duration } from '../lib/format.ts';
import { arrowRows } from '../lib/keys.ts';
import { useNeeds } from '../lib/needs.tsx';
import { Link } from '../lib/router.tsx';
import { sessionState } from '../lib/state.ts';
import type { Session } from '../lib/types.ts';
import { TaskActions } from './tasks/TaskActions.tsx';

const DAY = 24 * 3600_000;

/** A session that needs a look, with why. */
function SessionCard({ s, why }: { s: Session; why: string }) {
  return (
    <li className="card need" data-row tabIndex={-1} data-session={s.id}>
      <Status value={sessionState(s)} title={s.endDetail} />{' '}
      <Link to={`/sessions/${s.id}`}>{s.title ?? s.id}</Link> <span className="muted">{s.id}</span>{' '}
      <span>{why}</span> <Usage u={s.subtreeUsage} />
      {s.endDetail ? <div className="muted wrap">{clip(s.endDetail, 300)}</div> : null}
    </li>
  );
}

/** What needs me: open escalations answered in place, bad ends, stuck agents, tasks in review. */
export default function Home() {
  const n = useNeeds();
  const now = Date.now();
  const open = n.escalations.filter((e) => e.status === 'open');
  const answered = n.escalations.filter((e) => e.status !== 'open' && now - (e.answeredAt ?? 0) < DAY);
  const nothing = n.loaded && !open.length && !n.ended.length && !n.stuck.length && !n.review.length;
  return (
    <section className="pad home" aria-label="What needs you" onKeyDown={(e) => arrowRows(e)}>
      <h1>What needs you</h1>
      <ErrorBox error={n.error} />
      {!n.loaded ? <p className="muted">Loading…</p> : null}
      {nothing ? <p className="muted">Nothing needs you now.</p> : null}
      <section aria-label="Escalations">
        <h2>
          Questions <span className="count">{open.length}</span>
        </h2>
        {open.map((e) => (
          <EscalationCard key={e.id} e={e} onAnswered={n.reload} />
        ))}
        {answered.length ? (
          <details>
            <summary className="muted">answered today ({answered.length})</summary>
            {answered.map((e) => (
              <EscalationCard key={e.id} e={e} onAnswered={n.reload} />
            ))}
          </details>
        ) : null}
      </section>
      <section aria-label="Failed sessions">
        <h2>
          Crashed or over budget <span className="count">{n.ended.length}</span>
        </h2>
        <ul className="plain">
          {n.ended.map((s) => (
            <SessionCard key={s.id} s={s} why={`ended ${duration(now - (s.endedAt ?? now))} ago`} />
          ))}
        </ul>
      </section>
      <section aria-label="Stuck sessions">
        <h2>
          Stuck <span className="count">{n.stuck.length}</span>{' '}
          <small className="muted">
            no output or status change for {n.stuckMinutes} min (?stuck=minutes)
          </small>
        </h2>
        <ul className="plain">
          {n.stuck.map((s) => (
            <SessionCard key={s.id} s={s} why={`no progress for ${duration(now - s.updatedAt)}`} />
          ))}
        </ul>
      </section>
      <section aria-label="Tasks in review">
        <h2>
          Waiting for your review <span className="count">{n.review.length}</span>
        </h2>
        <ul className="plain">
          {n.review.map((t) => (
            <li key={t.id} className="card need" data-row tabIndex={-1} data-task={t.id}>
              <Status value={t.status} /> <Link to={`/tasks/${t.id}`}>{t.title}</Link>{' '}
              <span className="muted">{t.id}</span>
              {t.result ? <div className="wrap">{clip(t.result, 300)}</div> : null}
              <TaskActions task={t} onDone={n.reload} />
            </li>
          ))}
        </ul>
      </section>
    </section>
  );
}
