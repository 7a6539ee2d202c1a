import type { ReactNode } from 'react';
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

/** One kind of thing that needs the operator: a heading with its count, then its items. */
function Part({
  label,
  title,
  count,
  note,
  children,
}: {
  label: string;
  title: string;
  count: number;
  note?: string;
  children: ReactNode;
}) {
  return (
    <section aria-label={label}>
      <h2>
        {title} <span className="count">{count}</span> {note ? <small className="muted">{note}</small> : null}
      </h2>
      <ul className="plain">{children}</ul>
    </section>
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
      <Part label="Failed sessions" title="Crashed or over budget" count={n.ended.length}>
        {n.ended.map((s) => (
          <SessionCard key={s.id} s={s} why={`ended ${duration(now - (s.endedAt ?? now))} ago`} />
        ))}
      </Part>
      <Part
        label="Stuck sessions"
        title="Stuck"
        count={n.stuck.length}
        note={`no output or status change for ${n.stuckMinutes} min (?stuck=minutes)`}
      >
        {n.stuck.map((s) => (
          <SessionCard key={s.id} s={s} why={`no progress for ${duration(now - s.updatedAt)}`} />
        ))}
      </Part>
      <Part label="Tasks in review" title="Waiting for your review" count={n.review.length}>
        {n.review.map((t) => (
          <li key={t.id} className="card need" data-row tabIndex={-1} data-task={t.id}>
            <Status value={t.status} /> <Link to={`/tasks/${t.id}`}>{t.title}</Link>{' '}
            <span className="muted">{t.id}</span>
            {t.result ? <div className="wrap">{clip(t.result, 300)}</div> : null}
            <TaskActions task={t} onDone={n.reload} />
          </li>
        ))}
      </Part>
    </section>
  );
}
