import dagre from '@dagrejs/dagre';
import type { Edge, Node } from '@xyflow/react';
import { useMemo } from 'react';
import { GraphCanvas } from '../../components/GraphCanvas.tsx';
import type { Task } from '../../lib/types.ts';

const W = 180;
const H = 44;

/**
 * The task DAG: parent → child edges (solid) and dependency edges (dashed, dep → dependent),
 * on the shared canvas (labels ≥ 11 px, minimap, search by title or id).
 */
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
  const findable = useMemo(
    () =>
      tasks.map((t) => ({
        id: t.id,
        text: `${t.title} ${t.id}`.toLowerCase(),
        label: `${t.title} · ${t.status}`,
      })),
    [tasks],
  );
  return (
    <GraphCanvas testId="task-graph" nodes={nodes} edges={edges} findable={findable} onNodeClick={onOpen} />
  );
}
