import {
  Background,
  Controls,
  type Edge,
  MiniMap,
  type Node,
  type NodeTypes,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { type KeyboardEvent, type ReactNode, useMemo, useState } from 'react';

/** The node label size (styles.css, `.react-flow__node`). */
export const LABEL_PX = 12;
/** Labels never drawn smaller than this: the zoom stops there (LABEL_PX × MIN_ZOOM ≥ 11 px). */
export const MIN_LABEL_PX = 11;
const MIN_ZOOM = MIN_LABEL_PX / LABEL_PX;
const SHOWN_RESULTS = 12;

export interface Findable {
  id: string;
  /** What search matches (lower-cased here). */
  text: string;
  label: string;
}

/**
 * A pannable canvas for a laid-out graph, with a minimap for the whole and a search that
 * brings any node into view. Its zoom never goes below what keeps labels ≥ 11 px: a big graph
 * is not shrunk into an unreadable strip, it is panned (minimap, search, drag).
 * `reveal(id)` is the caller's chance to expand what hides a node before it is centred.
 */
export function GraphCanvas(props: {
  testId: string;
  nodes: Node[];
  edges: Edge[];
  findable: Findable[];
  onNodeClick?: (id: string) => void;
  reveal?: (id: string) => void;
  toolbar?: ReactNode;
  nodeTypes?: NodeTypes;
}) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}

function Canvas({
  testId,
  nodes,
  edges,
  findable,
  onNodeClick,
  reveal,
  toolbar,
  nodeTypes,
}: Parameters<typeof GraphCanvas>[0]) {
  const flow = useReactFlow();
  const [q, setQ] = useState('');
  const [found, setFound] = useState<string | null>(null);
  const results = useMemo(() => {
    const t = q.trim().toLowerCase();
    if (!t) return [];
    return findable.filter((f) => f.text.includes(t));
  }, [q, findable]);
  const byId = useMemo(() => new Map(nodes.map((n) => [n.id, n])), [nodes]);
  const go = (id: string) => {
    reveal?.(id);
    setFound(id);
    setQ('');
    // After a reveal the node may only exist on the next render: centre once it is laid out.
    requestAnimationFrame(() => {
      const n = flow.getNode(id) ?? byId.get(id);
      if (!n) return;
      const w = n.measured?.width ?? n.width ?? 0;
      const h = n.measured?.height ?? n.height ?? 0;
      void flow.setCenter(n.position.x + w / 2, n.position.y + h / 2, { zoom: 1, duration: 0 });
    });
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && results[0]) go(results[0].id);
    if (e.key === 'Escape') setQ('');
  };
  const shown = useMemo(
    () => (found ? nodes.map((n) => (n.id === found ? { ...n, selected: true } : n)) : nodes),
    [nodes, found],
  );
  return (
    <div className="graph" data-testid={testId}>
      <div className="graph-tools">
        {toolbar}
        <span className="graph-search">
          <input
            type="search"
            aria-label="Find in graph"
            placeholder="find…"
            value={q}
            onChange={(e) => setQ(e.target.value)}
            onKeyDown={onKey}
          />
          {results.length > 0 ? (
            <ul className="graph-results" aria-label="Matches">
              {results.slice(0, SHOWN_RESULTS).map((r) => (
                <li key={r.id}>
                  <button type="button" onClick={() => go(r.id)}>
                    {r.label}
                  </button>
                </li>
              ))}
              {results.length > SHOWN_RESULTS ? (
                <li className="muted">{results.length - SHOWN_RESULTS} more: type more</li>
              ) : null}
            </ul>
          ) : null}
        </span>
      </div>
      <ReactFlow
        nodes={shown}
        edges={edges}
        nodeTypes={nodeTypes}
        // Opens at full size on the top left (where layouts start), not fitted: fitting a big
        // graph would only centre it at the smallest zoom.
        defaultViewport={{ x: 16, y: 16, zoom: 1 }}
        fitViewOptions={{ maxZoom: 1, minZoom: MIN_ZOOM }}
        minZoom={MIN_ZOOM}
        maxZoom={2}
        onlyRenderVisibleElements
        nodesDraggable={false}
        nodesConnectable={false}
        onNodeClick={(_e, n) => onNodeClick?.(n.id)}
      >
        <Background />
        <Controls showInteractive={false} />
        <MiniMap pannable zoomable ariaLabel="Minimap" />
      </ReactFlow>
    </div>
  );
}
