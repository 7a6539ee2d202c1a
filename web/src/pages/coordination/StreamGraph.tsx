import dagre from '@dagrejs/dagre';
import { Background, Controls, type Edge, type Node, Position, ReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import type { Session, Stream } from '../../lib/types.ts';

const W = 170;
const H = 40;

/**
 * Sessions and the streams between them, laid out by dagre (left to right), drawn by React
 * Flow, culled to what is in view (onlyRenderVisibleElements). Keeping every node mounted
 * instead was measured slower to pan at 500 nodes (bench/ui-scale.ts, docs/performance.md).
 * Nodes are not draggable: the layout is computed, and drag handlers cost on every gesture.
 */
export default function StreamGraph({
  streams,
  sessions,
  onSelect,
}: {
  streams: Stream[];
  sessions: Session[];
  onSelect: (id: string) => void;
}) {
  const { nodes, edges } = useMemo(() => layout(streams, sessions), [streams, sessions]);
  return (
    <div className="graph" data-testid="graph">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        minZoom={0.05}
        onlyRenderVisibleElements
        nodesDraggable={false}
        nodesConnectable={false}
        onNodeClick={(_e, n) => n.id.startsWith('stream:') && onSelect(n.id.slice(7))}
      >
        <Background />
        <Controls />
      </ReactFlow>
    </div>
  );
}

function layout(streams: Stream[], sessions: Session[]): { nodes: Node[]; edges: Edge[] } {
  const live = sessions.filter((s) => s.status !== 'stopped' && s.id !== 'init');
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const shown = new Set(live.map((s) => s.id));
  for (const st of streams) for (const sub of st.subscribers) if (byId.has(sub.holder)) shown.add(sub.holder);
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 60 });
  g.setDefaultEdgeLabel(() => ({}));
  const nodes: Node[] = [];
  const edges: Edge[] = [];
  const operators = new Set<string>();
  for (const id of shown) {
    const s = byId.get(id);
    g.setNode(`session:${id}`, { width: W, height: H });
    nodes.push({
      id: `session:${id}`,
      data: { label: `${s?.title ?? id} · ${s?.status ?? ''}` },
      position: { x: 0, y: 0 },
      className: `node-session status-${s?.status ?? 'unknown'}`,
    });
    if (s?.parentId && shown.has(s.parentId)) {
      edges.push({
        id: `p:${id}`,
        source: `session:${s.parentId}`,
        target: `session:${id}`,
        className: 'edge-parent',
      });
      g.setEdge(`session:${s.parentId}`, `session:${id}`);
    }
  }
  for (const st of streams) {
    g.setNode(`stream:${st.id}`, { width: W, height: H });
    nodes.push({
      id: `stream:${st.id}`,
      data: { label: `# ${st.name}` },
      position: { x: 0, y: 0 },
      className: `node-stream kind-${st.kind}`,
    });
    for (const sub of st.subscribers) {
      let from = `session:${sub.holder}`;
      if (sub.holder.startsWith('operator:')) {
        from = `op:${sub.holder}`;
        if (!operators.has(from)) {
          operators.add(from);
          g.setNode(from, { width: W, height: H });
          nodes.push({
            id: from,
            data: { label: sub.holder },
            position: { x: 0, y: 0 },
            className: 'node-operator',
          });
        }
      } else if (!shown.has(sub.holder)) continue;
      edges.push({ id: `f:${sub.id}`, source: from, target: `stream:${st.id}`, label: sub.permission });
      g.setEdge(from, `stream:${st.id}`);
    }
  }
  dagre.layout(g);
  for (const n of nodes) {
    const p = g.node(n.id);
    if (p) n.position = { x: p.x - W / 2, y: p.y - H / 2 };
    n.sourcePosition = Position.Right;
    n.targetPosition = Position.Left;
  }
  return { nodes, edges };
}
