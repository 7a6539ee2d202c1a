import { ErrorBox } from '../components/ErrorBox.tsx';
import { ListToolbar, useListView } from '../components/ListToolbar.tsx';
import { ApiError, api } from '../lib/api.ts';
import { dateTime } from '../lib/format.ts';
import { arrowRows } from '../lib/keys.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import { Link } from '../lib/router.tsx';
import type { Finding } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';

const SORTS = [
  { value: 'best', label: 'best match' },
  { value: 'newest', label: 'newest' },
  { value: 'title', label: 'title' },
];

const off = (e: Error | null) => e instanceof ApiError && e.status === 404 && /knowledge/.test(e.message);

/**
 * The zone's findings: the search box is knowledge_search (stemmed words, best first), the
 * filter a tag; `/knowledge/:id` shows one finding whole.
 */
export default function Knowledge({ id }: { id?: string | undefined }) {
  const view = useListView({ sort: 'best' });
  const list = useFetch(
    () =>
      // The generic route takes the tags as JSON (a query string cannot say a one-tag list).
      api<{ findings: Finding[] }>('POST', '/v1/syscalls/knowledge_search', {
        ...(view.q.trim() ? { query: view.q } : {}),
        ...(view.filter ? { tags: [view.filter] } : {}),
        limit: 50,
      }),
    [view.q, view.filter],
  );
  const one = useFetch(
    () =>
      id
        ? api<{ finding: Finding }>('GET', `/v1/knowledge/${encodeURIComponent(id)}`)
        : Promise.resolve(null),
    [id],
  );
  useLiveRefetch((e) => e.type.startsWith('knowledge.'), list.reload, 300);
  if (off(list.error)) return <p className="pad muted">The knowledge plugin is off.</p>;
  const found = list.data?.findings ?? [];
  const tags = [...new Set(found.flatMap((f) => f.tags))].sort();
  const rows = [...found].sort((a, b) =>
    view.sort === 'newest'
      ? b.createdAt - a.createdAt
      : view.sort === 'title'
        ? a.title.localeCompare(b.title)
        : 0,
  );
  const f = one.data?.finding;
  return (
    <div className="pad knowledge">
      <ListToolbar
        view={view}
        label="findings"
        filters={[
          { value: '', label: 'any tag' },
          ...[...new Set([...tags, view.filter])]
            .filter(Boolean)
            .map((t) => ({ value: t, label: `tag ${t}` })),
        ]}
        sorts={SORTS}
        count={`${rows.length} findings`}
      />
      <ErrorBox error={list.error ?? one.error} />
      {f ? (
        <article className="card" aria-label={`Finding ${f.id}`}>
          <h2>{f.title}</h2>
          <p className="muted">
            {f.id} · {dateTime(f.createdAt)} · {f.createdBy}
            {f.task ? (
              <>
                {' '}
                · task <Link to={`/tasks/${f.task}`}>{f.task}</Link>
              </>
            ) : null}
            {f.session ? (
              <>
                {' '}
                · session <Link to={`/sessions/${f.session}`}>{f.session}</Link>
              </>
            ) : null}
          </p>
          <pre className="block wrap">{f.body}</pre>
        </article>
      ) : null}
      <ul className="plain" aria-label="Findings" onKeyDown={(e) => arrowRows(e)}>
        {rows.map((r) => (
          <li
            key={r.id}
            className={`finding${r.id === id ? ' selected' : ''}`}
            data-row
            tabIndex={-1}
            data-finding={r.id}
          >
            <Link to={`/knowledge/${r.id}`}>{r.title}</Link>{' '}
            {r.tags.map((t) => (
              <span key={t} className="chip">
                {t}
              </span>
            ))}{' '}
            <span className="muted">
              {dateTime(r.createdAt)}
              {r.task ? ` · ${r.task}` : ''}
            </span>
            <div className="muted ellipsis">{r.body}</div>
          </li>
        ))}
        {list.data && !rows.length ? <li className="muted">No findings.</li> : null}
      </ul>
    </div>
  );
}
