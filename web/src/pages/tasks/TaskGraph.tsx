import dagre from '@dagrejs/dagre';
import { Background, Controls, type Edge, type Node, ReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import type { Task } from '../../lib/types.ts';

const W = 180;
const H = 44;

/** The task DAG: parent → child edges (solid) and dependency edges (dashed, dep → dependent). */
export default function TaskGraph({
  tasks,
  deps,
  onOpen,
}: {
  tasks: Task[];
  deps: Map<string, string[]>;
  onOpen: (id: string) => void;
}) {
  const { nodes, edges } = useMemo(() => {
    const g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: 'TB', nodesep: 16, ranksep: 50 });
    g.setDefaultEdgeLabel(() => ({}));
    const ids = new Set(tasks.map((t) => t.id));
    const nodes: Node[] = tasks.map((t) => {
      g.setNode(t.id, { width: W, height: H });
      return {
        id: t.id,
        data: { label: `${t.title} · ${t.status}` },
        position: { x: 0, y: 0 },
        className: `node-task status-${t.status}`,
      };
    });
    const edges: Edge[] = [];
    for (const t of tasks) {
      if (t.parentId && ids.has(t.parentId)) {
        edges.push({ id: `p:${t.id}`, source: t.parentId, target: t.id });
        g.setEdge(t.parentId, t.id);
      }
      for (const d of deps.get(t.id) ?? []) {
        if (!ids.has(d)) continue;
        edges.push({
          id: `d:${d}:${t.id}`,
          source: d,
          target: t.id,
          className: 'edge-dep',
          animated: true,
          label: 'before',
        });
        g.setEdge(d, t.id);
      }
    }
    dagre.layout(g);
    for (const n of nodes) {
      const p = g.node(n.id);
      if (p) n.position = { x: p.x - W / 2, y: p.y - H / 2 };
    }
    return { nodes, edges };
  }, [tasks, deps]);
  return (
    <div className="graph" data-testid="task-graph">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        fitView
        minZoom={0.05}
        onlyRenderVisibleElements
        nodesConnectable={false}
        onNodeClick={(_e, n) => onOpen(n.id)}
      >
        <Background />
        <Controls />
      </ReactFlow>
    </div>
  );
}
