import type { Session, Stream, Task } from '../../lib/types.ts';

export type GroupBy = 'task' | 'room';

/** One drawn box: a group's header, a session, or a room. */
export interface Cell {
  /** Unique per placement (a session in two rooms is drawn in each). */
  key: string;
  kind: 'group' | 'session' | 'stream';
  /** The session or stream id (the group key for headers). */
  ref: string;
  label: string;
  depth: number;
  x: number;
  y: number;
  status?: string;
  /** Descendants hidden under a collapsed session (or a collapsed group's rows). */
  hidden: number;
  collapsible: boolean;
  collapsed: boolean;
}

export const CELL_W = 250;
export const CELL_H = 26;
const GAP_X = 30;
const INDENT = 14;
/** Rows per column: a column is about one 800 px screen tall at zoom 1. */
const COLUMN_ROWS = 24;

interface Group {
  key: string;
  label: string;
  sessions: string[];
  streams: Stream[];
}

/**
 * The Coordination graph as columns of groups (by task, or by room), each an indented
 * session tree with its rooms: a laid-out board, not a force or rank layout, so 300 sessions
 * fill a few screens of readable rows instead of one column too thin to read. Pure, so the
 * same input always draws the same board.
 */
export function layoutBoard(
  sessions: Session[],
  streams: Stream[],
  tasks: Task[],
  by: GroupBy,
  collapsed: ReadonlySet<string>,
): Cell[] {
  const shownSessions = sessions.filter((s) => s.status !== 'stopped' && s.id !== 'init');
  const byId = new Map(shownSessions.map((s) => [s.id, s]));
  const groups =
    by === 'task' ? groupByTask(shownSessions, streams, tasks) : groupByRoom(shownSessions, streams);
  const cells: Cell[] = [];
  let col = 0;
  let row = 0;
  const place = (c: Omit<Cell, 'x' | 'y'>) => {
    if (row >= COLUMN_ROWS) {
      col++;
      row = 0;
    }
    cells.push({ ...c, x: col * (CELL_W + GAP_X) + c.depth * INDENT, y: row * CELL_H });
    row++;
  };
  for (const g of groups) {
    // A group starts a new column when less than a quarter of one is left.
    if (row > 0 && row + 1 >= COLUMN_ROWS - COLUMN_ROWS / 4) {
      col++;
      row = 0;
    } else if (row > 0) row++; // a blank row between groups
    const groupCollapsed = collapsed.has(g.key);
    const inGroup = new Set(g.sessions);
    place({
      key: g.key,
      kind: 'group',
      ref: g.key,
      label: `${g.label} · ${g.sessions.length ? `${g.sessions.length} sessions` : `${g.streams.length} rooms`}`,
      depth: 0,
      hidden: groupCollapsed ? g.sessions.length + g.streams.length : 0,
      collapsible: true,
      collapsed: groupCollapsed,
    });
    if (groupCollapsed) continue;
    for (const st of g.streams)
      place({
        key: `${g.key}/stream:${st.id}`,
        kind: 'stream',
        ref: st.id,
        label: `# ${st.name} · ${st.subscribers.length}`,
        depth: 1,
        hidden: 0,
        collapsible: false,
        collapsed: false,
      });
    const children = new Map<string, string[]>();
    const roots: string[] = [];
    for (const id of g.sessions) {
      const parent = byId.get(id)?.parentId;
      if (parent && inGroup.has(parent)) children.set(parent, [...(children.get(parent) ?? []), id]);
      else roots.push(id);
    }
    const count = (id: string): number => (children.get(id) ?? []).reduce((n, c) => n + 1 + count(c), 0);
    const walk = (id: string, depth: number) => {
      const s = byId.get(id);
      const kids = children.get(id) ?? [];
      const isCollapsed = collapsed.has(`${g.key}/session:${id}`);
      place({
        key: `${g.key}/session:${id}`,
        kind: 'session',
        ref: id,
        label: s?.title ?? id,
        depth: Math.min(depth, 8),
        status: s?.status ?? 'unknown',
        hidden: isCollapsed ? count(id) : 0,
        collapsible: kids.length > 0,
        collapsed: isCollapsed,
      });
      if (!isCollapsed) for (const k of kids) walk(k, depth + 1);
    };
    for (const r of roots) walk(r, 1);
  }
  return cells;
}

const anchorOf = (s: Stream) => s.sessionId ?? (s.owner.startsWith('ses_') ? s.owner : null);

function groupByTask(sessions: Session[], streams: Stream[], tasks: Task[]): Group[] {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const taskOfSession = new Map<string, Task>();
  // The root task's session is init, every session's ancestor: it would make one group of all.
  for (const t of tasks) if (t.sessionId && t.sessionId !== 'init') taskOfSession.set(t.sessionId, t);
  // A session belongs to the task of its nearest ancestor that runs one.
  const taskOf = (id: string): Task | undefined => {
    for (let cur: string | null | undefined = id, n = 0; cur && n < 64; n++) {
      const t = taskOfSession.get(cur);
      if (t) return t;
      cur = byId.get(cur)?.parentId;
    }
    return undefined;
  };
  const groups = new Map<string, Group>();
  const groupOf = (key: string, label: string) => {
    let g = groups.get(key);
    if (!g) {
      g = { key, label, sessions: [], streams: [] };
      groups.set(key, g);
    }
    return g;
  };
  const keyOfSession = (id: string) => {
    const t = taskOf(id);
    return t ? groupOf(`task:${t.id}`, `task ${t.title}`) : groupOf('task:none', 'no task');
  };
  for (const s of sessions) keyOfSession(s.id).sessions.push(s.id);
  for (const st of streams) {
    const a = anchorOf(st);
    (a && byId.has(a) ? keyOfSession(a) : groupOf(`owner:${st.owner}`, `rooms of ${st.owner}`)).streams.push(
      st,
    );
  }
  return sortGroups([...groups.values()]);
}

function groupByRoom(sessions: Session[], streams: Stream[]): Group[] {
  const live = new Set(sessions.map((s) => s.id));
  const placed = new Set<string>();
  const groups: Group[] = streams.map((st) => {
    const members = [...new Set(st.subscribers.map((x) => x.holder))].filter((h) => live.has(h));
    for (const m of members) placed.add(m);
    return { key: `room:${st.id}`, label: `# ${st.name}`, sessions: members, streams: [] };
  });
  const rest = sessions.filter((s) => !placed.has(s.id)).map((s) => s.id);
  if (rest.length) groups.push({ key: 'room:none', label: 'in no room', sessions: rest, streams: [] });
  return sortGroups(groups);
}

const sortGroups = (gs: Group[]) =>
  gs.sort(
    (a, b) =>
      Number(a.key.endsWith(':none')) - Number(b.key.endsWith(':none')) || a.label.localeCompare(b.label),
  );
