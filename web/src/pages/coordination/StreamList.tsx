import { VirtualList } from '../../components/VirtualList.tsx';
import type { Stream } from '../../lib/types.ts';
import type { Group } from './model.ts';

type Row = { kind: 'group'; group: Group } | { kind: 'stream'; stream: Stream };

/** The stream inventory, grouped, windowed (200 streams or 2,000). */
export function StreamList({
  groups,
  selected,
  onSelect,
}: {
  groups: Group[];
  selected: string | null;
  onSelect: (id: string) => void;
}) {
  const rows: Row[] = groups.flatMap((g) => [
    { kind: 'group' as const, group: g },
    ...g.streams.map((s) => ({ kind: 'stream' as const, stream: s })),
  ]);
  if (rows.length === 0) return <p className="pad muted">No streams.</p>;
  return (
    <VirtualList
      label="Streams"
      items={rows}
      keyOf={(r) => (r.kind === 'group' ? `g:${r.group.key}` : r.stream.id)}
      row={(r) =>
        r.kind === 'group' ? (
          <div className="group-row">{r.group.label}</div>
        ) : (
          <button
            type="button"
            className={`stream-row${selected === r.stream.id ? ' selected' : ''}`}
            data-stream={r.stream.name}
            onClick={() => onSelect(r.stream.id)}
          >
            <span className="name">{r.stream.name}</span>
            <span className="muted">{r.stream.kind}</span>
            <span className="muted">
              {r.stream.subscribers.length} member{r.stream.subscribers.length === 1 ? '' : 's'}
            </span>
            {r.stream.closedAt ? <span className="status status-stopped">closed</span> : null}
          </button>
        )
      }
    />
  );
}
