import { type FormEvent, useState } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { Status } from '../components/Status.tsx';
import { allPages, api } from '../lib/api.ts';
import { time } from '../lib/format.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import { Link } from '../lib/router.tsx';
import type { Escalation } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';

/** Escalations and questions waiting for a human, answered here (inbox_answer). */
export default function Inbox() {
  const [all, setAll] = useState(false);
  const list = useFetch(() => allPages<Escalation>('/v1/inbox', 'escalations', { all }), [all]);
  useLiveRefetch((e) => e.type.startsWith('escalation.') || e.type === 'task.escalated', list.reload);
  const items = list.data ?? [];
  return (
    <div className="pad inbox">
      <div className="toolbar">
        <label>
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> Answered ones too
        </label>
        <span className="muted">{items.length} escalations</span>
      </div>
      <ErrorBox error={list.error} />
      {items.length === 0 && list.data ? <p className="muted">Nothing waits for you.</p> : null}
      {items.map((e) => (
        <EscalationCard key={e.id} e={e} onAnswered={list.reload} />
      ))}
    </div>
  );
}

function EscalationCard({ e, onAnswered }: { e: Escalation; onAnswered: () => void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    api('POST', `/v1/inbox/${encodeURIComponent(e.id)}/answer`, { text }).then(
      () => {
        setText('');
        onAnswered();
      },
      (err: Error) => setError(err),
    );
  };
  return (
    <article className="card" aria-label={`Escalation ${e.id}`}>
      <header className="row">
        <Status value={e.status} />
        <Link to={`/tasks/${e.task}`}>{e.taskTitle ?? e.task}</Link>
        {e.session ? <Link to={`/sessions/${e.session}`}>{e.session}</Link> : null}
        <span className="muted">{time(e.createdAt)}</span>
      </header>
      <p className="question">{e.question}</p>
      {e.status === 'open' || e.status === 'pending' ? (
        <form className="inline" onSubmit={submit}>
          <input
            aria-label="Answer"
            placeholder="your answer"
            value={text}
            onChange={(ev) => setText(ev.target.value)}
          />
          <button type="submit" disabled={!text.trim()}>
            Answer
          </button>
        </form>
      ) : (
        <p className="muted">answered by {e.answeredBy ?? '—'}</p>
      )}
      <ErrorBox error={error} />
    </article>
  );
}
