import { useState } from 'react';
import { api } from '../lib/api.ts';
import { time } from '../lib/format.ts';
import { Link } from '../lib/router.tsx';
import type { Escalation } from '../lib/types.ts';
import { ErrorBox } from './ErrorBox.tsx';
import { Status } from './Status.tsx';
import { outcome, TextSend } from './TextSend.tsx';

const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number') ? v.map(String) : null;

/** The context an agent gave with its question: files and options as lists, the rest as text. */
function Context({ ctx, onPick }: { ctx: Record<string, unknown>; onPick?: (o: string) => void }) {
  const entries = Object.entries(ctx);
  if (!entries.length) return null;
  return (
    <dl className="context" aria-label="Context">
      {entries.map(([k, v]) => {
        const list = strings(v);
        return (
          <div key={k}>
            <dt>{k}</dt>
            <dd>
              {k === 'options' && list && onPick ? (
                <span className="row">
                  {list.map((o) => (
                    <button key={o} type="button" onClick={() => onPick(o)}>
                      {o}
                    </button>
                  ))}
                </span>
              ) : list ? (
                <ul>
                  {list.map((x) => (
                    <li key={x}>
                      <code>{x}</code>
                    </li>
                  ))}
                </ul>
              ) : (
                <pre className="block wrap">{typeof v === 'string' ? v : JSON.stringify(v, null, 2)}</pre>
              )}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}

/** An escalation, answered in place (inbox_answer); once answered, the answer given and by whom. */
export function EscalationCard({ e, onAnswered }: { e: Escalation; onAnswered: () => void }) {
  const [error, setError] = useState<Error | null>(null);
  const answer = (value: string) =>
    outcome(
      api('POST', `/v1/inbox/${encodeURIComponent(e.id)}/answer`, { text: value }).then(onAnswered),
      setError,
    );
  const open = e.status === 'open';
  return (
    <article className="card" aria-label={`Escalation ${e.id}`} data-escalation={e.id} data-row tabIndex={-1}>
      <header className="row">
        <Status value={e.status} />
        <Link to={`/tasks/${e.task}`}>{e.taskTitle ?? e.task}</Link>
        {e.session ? <Link to={`/sessions/${e.session}`}>{e.session}</Link> : null}
        <span className="muted">{time(e.createdAt)}</span>
        <Link to={`/inbox/${e.id}`} className="muted">
          link
        </Link>
      </header>
      <p className="question">{e.question}</p>
      <Context ctx={e.context ?? {}} {...(open ? { onPick: (o: string) => void answer(o) } : {})} />
      {open ? (
        <TextSend label="Answer" placeholder="your answer" button="Answer" send={answer} />
      ) : (
        <p className="answer" data-testid="answer">
          <span className="muted">answered by {e.answeredBy ?? '—'}:</span> {e.answer ?? ''}
        </p>
      )}
      <ErrorBox error={error} />
    </article>
  );
}
