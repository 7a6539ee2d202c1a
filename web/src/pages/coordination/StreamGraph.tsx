import type { Node, NodeProps, NodeTypes } from '@xyflow/react';
import { createContext, useCallback, useContext, useMemo, useState } from 'react';
import { type Findable, GraphCanvas } from '../../components/GraphCanvas.tsx';
import { Link } from '../../lib/router.tsx';
import type { Session, Stream, Task } from '../../lib/types.ts';
import { CELL_H, CELL_W, type Cell, type GroupBy, layoutBoard } from './graphLayout.ts';

type CellNode = Node<{ cell: Cell }, 'cell'>;

/** What a cell's buttons do: passed down by context, so nodes (memoised by React Flow) stay stable. */
const Actions = createContext<{ toggle(key: string): void; openStream(id: string): void }>({
  toggle: () => {},
  openStream: () => {},
});

/**
 * Sessions and rooms as a board (graphLayout.ts): grouped by task or by room, subtrees and
 * groups collapse, a minimap, search; a session's label is a link to its page, a room's
 * opens its drawer. Zoom stops where labels are 11 px (GraphCanvas).
 */
export default function StreamGraph({
  streams,
  sessions,
  tasks,
  onSelect,
}: {
  streams: Stream[];
  sessions: Session[];
  tasks: Task[];
  onSelect: (id: string) => void;
}) {
  const [by, setBy] = useState<GroupBy>('task');
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set());
  const cells = useMemo(
    () => layoutBoard(sessions, streams, tasks, by, collapsed),
    [sessions, streams, tasks, by, collapsed],
  );
  const nodes = useMemo<CellNode[]>(
    () =>
      cells.map((c) => ({
        id: c.key,
        type: 'cell',
        data: { cell: c },
        position: { x: c.x, y: c.y },
        width: CELL_W - c.depth * 14,
        height: CELL_H - 4,
        className: `cell cell-${c.kind}${c.status ? ` status-${c.status}` : ''}`,
      })),
    [cells],
  );
  // Search covers every session and room, collapsed or not: finding one expands its way.
  const findable = useMemo<Findable[]>(() => {
    const full = layoutBoard(sessions, streams, tasks, by, new Set());
    return full
      .filter((c) => c.kind !== 'group')
      .map((c) => ({ id: c.key, text: `${c.label} ${c.ref}`.toLowerCase(), label: c.label }));
  }, [sessions, streams, tasks, by]);
  const toggle = useCallback(
    (key: string) =>
      setCollapsed((prev) => {
        const next = new Set(prev);
        if (!next.delete(key)) next.add(key);
        return next;
      }),
    [],
  );
  // Expand the group and every collapsed ancestor of the cell found.
  const reveal = (key: string) =>
    setCollapsed((prev) => new Set([...prev].filter((k) => !isAbove(k, key, sessions))));
  const actions = useMemo(() => ({ toggle, openStream: onSelect }), [toggle, onSelect]);
  return (
    <Actions.Provider value={actions}>
      <GraphCanvas
        testId="graph"
        nodes={nodes}
        edges={[]}
        nodeTypes={NODE_TYPES}
        findable={findable}
        reveal={reveal}
        toolbar={
          <fieldset aria-label="Group by" className="toggle">
            <button type="button" aria-pressed={by === 'task'} onClick={() => setBy('task')}>
              by task
            </button>
            <button type="button" aria-pressed={by === 'room'} onClick={() => setBy('room')}>
              by room
            </button>
          </fieldset>
        }
      />
    </Actions.Provider>
  );
}

/** Whether collapsing `k` hides `key`: its group, or a session above it in the same group. */
function isAbove(k: string, key: string, sessions: Session[]): boolean {
  const [group, what] = k.split('/');
  if (!key.startsWith(`${group}/`)) return false;
  if (!what) return true;
  const above = what.slice('session:'.length);
  const parent = new Map(sessions.map((s) => [s.id, s.parentId]));
  const m = /\/session:(.+)$/.exec(key);
  for (let cur = m ? parent.get(m[1] as string) : undefined, n = 0; cur && n < 64; n++) {
    if (cur === above) return true;
    cur = parent.get(cur);
  }
  return false;
}

function CellView({ data }: NodeProps<CellNode>) {
  const { cell } = data;
  const { toggle, openStream } = useContext(Actions);
  const toggler = cell.collapsible ? (
    <button
      type="button"
      className="cell-toggle nodrag"
      aria-label={`${cell.collapsed ? 'Expand' : 'Collapse'} ${cell.label}`}
      aria-expanded={!cell.collapsed}
      onClick={() => toggle(cell.key)}
    >
      {cell.collapsed ? `▸ ${cell.hidden}` : '▾'}
    </button>
  ) : null;
  const roomGroup = cell.kind === 'group' && /^room:(?!none$)/.test(cell.ref) ? cell.ref.slice(5) : null;
  return (
    <div className="cell-body" data-cell={cell.key} title={cell.label}>
      {toggler}
      {cell.kind === 'session' ? (
        <Link to={`/sessions/${cell.ref}`} className="cell-label">
          {cell.label} <span className="muted">· {cell.status}</span>
        </Link>
      ) : cell.kind === 'stream' || roomGroup ? (
        <button
          type="button"
          className="cell-label linkish nodrag"
          onClick={() => openStream(roomGroup ?? cell.ref)}
        >
          {cell.label}
        </button>
      ) : (
        <strong className="cell-label">{cell.label}</strong>
      )}
    </div>
  );
}

const NODE_TYPES: NodeTypes = { cell: CellView };
