import { ErrorBox } from '../components/ErrorBox.tsx';
import { EscalationCard } from '../components/EscalationCard.tsx';
import { ListToolbar, matches, useListView } from '../components/ListToolbar.tsx';
import { allPages } from '../lib/api.ts';
import { arrowRows } from '../lib/keys.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import type { Escalation } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';

const DAY = 24 * 3600_000;
const FILTERS = [
  { value: '', label: 'open, answered today' },
  { value: 'open', label: 'open' },
  { value: 'all', label: 'open and answered' },
  { value: 'answered', label: 'answered' },
];
const SORTS = [
  { value: 'oldest', label: 'oldest first' },
  { value: 'newest', label: 'newest first' },
];

function shown(filter: string, e: Escalation): boolean {
  if (filter === 'all') return true;
  if (filter === 'open') return e.status === 'open';
  if (filter === 'answered') return e.status !== 'open';
  return e.status === 'open' || Date.now() - (e.answeredAt ?? 0) < DAY;
}

/** Escalations and questions waiting for a human, answered here (inbox_answer); `/inbox/:id` is one. */
export default function Inbox({ id }: { id?: string | undefined }) {
  const view = useListView({ sort: 'oldest' });
  const list = useFetch(() => allPages<Escalation>('/v1/inbox', 'escalations', { all: true }), []);
  useLiveRefetch((e) => e.type.startsWith('escalation.') || e.type === 'task.escalated', list.reload);
  const all = list.data ?? [];
  const items = all
    .filter((e) => (id ? e.id === id : true))
    .filter((e) => id || shown(view.filter, e))
    .filter((e) => matches(view.q, e.question, e.taskTitle, e.task, e.session, e.answer))
    .sort((a, b) => (view.sort === 'newest' ? b.createdAt - a.createdAt : a.createdAt - b.createdAt));
  return (
    <div className="pad inbox">
      <ListToolbar
        view={view}
        label="escalations"
        filters={FILTERS}
        sorts={SORTS}
        count={`${items.length} of ${all.length} escalations`}
      />
      <ErrorBox error={list.error} />
      {list.data && !items.some((e) => e.status === 'open') ? (
        <p className="muted">Nothing waits for you.</p>
      ) : null}
      <section aria-label="Escalations" onKeyDown={(e) => arrowRows(e)}>
        {items.map((e) => (
          <EscalationCard key={e.id} e={e} onAnswered={list.reload} />
        ))}
      </section>
    </div>
  );
}
