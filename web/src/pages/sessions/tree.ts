import type { Session } from '../../lib/types.ts';

/** Sessions in tree order (each after its parent, children by creation), with their depth in the view. */
export function treeOrder(sessions: Session[]): { s: Session; level: number }[] {
  const ids = new Set(sessions.map((s) => s.id));
  const kids = new Map<string | null, Session[]>();
  for (const s of sessions) {
    const p = s.parentId && ids.has(s.parentId) ? s.parentId : null;
    const list = kids.get(p) ?? [];
    list.push(s);
    kids.set(p, list);
  }
  const out: { s: Session; level: number }[] = [];
  const walk = (parent: string | null, level: number) => {
    for (const s of (kids.get(parent) ?? []).sort((a, b) => a.createdAt - b.createdAt)) {
      out.push({ s, level });
      walk(s.id, level + 1);
    }
  };
  walk(null, 0);
  return out;
}
