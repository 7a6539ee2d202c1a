import { useState } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { ListToolbar, matches, useListView } from '../components/ListToolbar.tsx';
import { Status } from '../components/Status.tsx';
import { Usage } from '../components/Usage.tsx';
import { VirtualList } from '../components/VirtualList.tsx';
import { allPages } from '../lib/api.ts';
import { clip, duration } from '../lib/format.ts';
import { useNeeds } from '../lib/needs.tsx';
import { Link } from '../lib/router.tsx';
import { sessionState } from '../lib/state.ts';
import type { Session } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import { SessionActions } from './sessions/SessionActions.tsx';
import { treeOrder } from './sessions/tree.ts';
import { useLiveSessionRows } from './sessions/useLiveRows.ts';

const STATES = [
  'pending',
  'running',
  'idle',
  'waiting',
  'suspended',
  'completed',
  'terminated',
  'killed',
  'crashed',
  'expired',
  'budget-exceeded',
  'reaped',
];
const FILTERS = [
  { value: '', label: 'any state' },
  { value: 'live', label: 'live' },
  { value: 'ended', label: 'ended' },
  ...STATES.map((s) => ({ value: s, label: s })),
];
const SORTS = [
  { value: 'tree', label: 'tree' },
  { value: 'newest', label: 'newest' },
  { value: 'cost', label: 'subtree cost' },
  { value: 'tokens', label: 'subtree tokens' },
];

const tokensOf = (s: Session) => (s.subtreeUsage.inputTokens ?? 0) + (s.subtreeUsage.outputTokens ?? 0);

/** The process tree: every session, search, state filter, sorting, actions on the selected one. */
export function Sessions() {
  const view = useListView({ sort: 'tree' });
  const [selected, setSelected] = useState<string | null>(null);
  const { waiting } = useNeeds();
  const list = useFetch(() => allPages<Session>('/v1/sessions', 'sessions', { all: true }), []);
  useLiveSessionRows(list);
  const all = list.data ?? [];
  const zones = [...new Set(all.map((s) => s.zone))];
  const stateOf = (s: Session) => sessionState(s, waiting.has(s.id));
  const keep = (s: Session) => {
    const st = stateOf(s);
    const f = view.filter;
    const ok =
      !f || (f === 'live' ? s.status !== 'stopped' : f === 'ended' ? s.status === 'stopped' : st === f);
    return ok && matches(view.q, s.title, s.id, s.runtime, s.lastMessage, st);
  };
  const ordered =
    view.sort === 'tree'
      ? treeOrder(all)
      : [...all]
          .sort((a, b) =>
            view.sort === 'cost'
              ? (b.subtreeUsage.costUsd ?? 0) - (a.subtreeUsage.costUsd ?? 0)
              : view.sort === 'tokens'
                ? tokensOf(b) - tokensOf(a)
                : b.createdAt - a.createdAt,
          )
          .map((s) => ({ s, level: 0 }));
  const rows = ordered.filter((r) => keep(r.s));
  const sel = all.find((s) => s.id === selected);
  const now = Date.now();
  return (
    <div className="sessions">
      <ListToolbar
        view={view}
        label="sessions"
        filters={FILTERS}
        sorts={SORTS}
        count={`zone ${zones.join(', ') || '—'} · ${rows.length} of ${all.length} sessions`}
      />
      <ErrorBox error={list.error} />
      {sel ? (
        <SessionActions session={sel} sessions={all} onDone={list.reload} />
      ) : (
        <p className="muted pad">Select a session for actions.</p>
      )}
      <div className="thead session-row">
        <span>session</span>
        <span>state</span>
        <span>runtime</span>
        <span>age</span>
        <span>subtree usage</span>
        <span>last message</span>
      </div>
      <VirtualList
        label="Sessions"
        height="calc(100vh - 230px)"
        items={rows}
        keyOf={(r) => r.s.id}
        row={({ s, level }) => (
          // biome-ignore lint/a11y/useSemanticElements: a row of a windowed list, not a form control
          <div
            className={`session-row${selected === s.id ? ' selected' : ''}`}
            data-session={s.id}
            data-row
            role="button"
            tabIndex={0}
            onClick={() => setSelected(s.id)}
            onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && setSelected(s.id)}
          >
            <span className="ellipsis" style={{ paddingLeft: level * 14 }}>
              <Link to={`/sessions/${s.id}`}>{s.title ?? s.id}</Link>{' '}
              <small className="muted">d{s.depth}</small>
            </span>
            <span className="ellipsis">
              <Status value={stateOf(s)} title={s.endDetail ?? s.activity} />
            </span>
            <span className="ellipsis">{s.runtime}</span>
            <span>{duration((s.endedAt ?? now) - s.createdAt)}</span>
            <span className="ellipsis muted">
              <Usage u={s.subtreeUsage} />
            </span>
            <span className="muted ellipsis">{clip(s.lastMessage, 100)}</span>
          </div>
        )}
      />
    </div>
  );
}
