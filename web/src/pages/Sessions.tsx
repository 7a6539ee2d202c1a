import { useState } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { Status } from '../components/Status.tsx';
import { VirtualList } from '../components/VirtualList.tsx';
import { allPages } from '../lib/api.ts';
import { clip, duration, usage } from '../lib/format.ts';
import { useLiveRefetch } from '../lib/live.tsx';
import { Link } from '../lib/router.tsx';
import type { Session } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import { SessionActions } from './sessions/SessionActions.tsx';
import { treeOrder } from './sessions/tree.ts';

const STATUSES = ['', 'pending', 'running', 'idle', 'suspended', 'stopped'];

/** The process tree: every session, live filters, actions on the selected one. */
export function Sessions() {
  const [status, setStatus] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const list = useFetch(() => allPages<Session>('/v1/sessions', 'sessions', { all: true }), []);
  useLiveRefetch((e) => e.type.startsWith('session.'), list.reload, 250);
  const all = list.data ?? [];
  const zones = [...new Set(all.map((s) => s.zone))];
  const rows = treeOrder(all).filter((r) => !status || r.s.status === status);
  const sel = all.find((s) => s.id === selected);
  const now = Date.now();
  return (
    <div className="sessions">
      <div className="toolbar">
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.target.value)} aria-label="Filter by status">
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </label>
        <span className="muted">
          zone {zones.join(', ') || '—'} · {rows.length} of {all.length} sessions
        </span>
      </div>
      <ErrorBox error={list.error} />
      {sel ? (
        <SessionActions session={sel} onDone={list.reload} />
      ) : (
        <p className="muted pad">Select a session for actions.</p>
      )}
      <div className="thead session-row">
        <span>session</span>
        <span>status</span>
        <span>runtime</span>
        <span>age</span>
        <span>usage</span>
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
            role="button"
            tabIndex={0}
            onClick={() => setSelected(s.id)}
            onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && setSelected(s.id)}
          >
            <span style={{ paddingLeft: level * 14 }}>
              <Link to={`/sessions/${s.id}`}>{s.title ?? s.id}</Link>{' '}
              <small className="muted">d{s.depth}</small>
            </span>
            <Status value={s.status} />
            <span>{s.runtime}</span>
            <span>{duration((s.endedAt ?? now) - s.createdAt)}</span>
            <span className="muted">{usage(s.subtreeUsage)}</span>
            <span className="muted ellipsis">{clip(s.lastMessage, 100)}</span>
          </div>
        )}
      />
    </div>
  );
}
