import type { ReactNode } from 'react';
import { useRoute } from '../lib/router.tsx';

/**
 * A list's view lives in the address (?q=&f=&sort=): a view is a link, so it can be saved,
 * shared and bookmarked (Temporal's saved views, without a server-side store).
 */
export function useListView(defaults: { sort: string }) {
  const { path, search, navigate } = useRoute();
  const get = (k: string, d = '') => search.get(k) ?? d;
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(search);
    if (v) p.set(k, v);
    else p.delete(k);
    const q = p.toString();
    navigate(`${path}${q ? `?${q}` : ''}`, true);
  };
  return { q: get('q'), filter: get('f'), sort: get('sort', defaults.sort), set };
}

export type ListView = ReturnType<typeof useListView>;

/** Words that must all appear, case-insensitively, in one of the row's fields. */
export function matches(q: string, ...fields: (string | null | undefined)[]): boolean {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const hay = fields.filter(Boolean).join(' ').toLowerCase();
  return words.every((w) => hay.includes(w));
}

/** The search box (focused by `/`), a filter and a sort, and whatever else the page adds. */
export function ListToolbar({
  view,
  label,
  filters,
  sorts,
  count,
  children,
}: {
  view: ListView;
  label: string;
  filters?: { value: string; label: string }[];
  sorts: { value: string; label: string }[];
  count: string;
  children?: ReactNode;
}) {
  return (
    <div className="toolbar">
      <input
        type="search"
        data-search
        aria-label={`Search ${label}`}
        placeholder={`search ${label}…  (/)`}
        value={view.q}
        onChange={(e) => view.set('q', e.target.value)}
      />
      {filters ? (
        <select
          aria-label={`Filter ${label}`}
          value={view.filter}
          onChange={(e) => view.set('f', e.target.value)}
        >
          {filters.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
      ) : null}
      <select
        aria-label={`Sort ${label}`}
        value={view.sort}
        onChange={(e) => view.set('sort', e.target.value)}
      >
        {sorts.map((s) => (
          <option key={s.value} value={s.value}>
            sort: {s.label}
          </option>
        ))}
      </select>
      {children}
      <span className="muted">{count}</span>
    </div>
  );
}
