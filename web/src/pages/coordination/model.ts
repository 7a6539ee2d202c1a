import type { Session, Stream, Task } from '../../lib/types.ts';

export interface Inventory {
  streams: Stream[];
  sessions: Session[];
  tasks: Task[];
}

export interface Group {
  key: string;
  label: string;
  streams: Stream[];
}

/** The session a stream belongs to: its anchor (stdin/pipe) or the session that created it. */
const anchorOf = (s: Stream) => s.sessionId ?? (s.owner.startsWith('ses_') ? s.owner : null);

/** Streams grouped by owning task, else owning session, else the operator that owns them. */
export function groupStreams(inv: Inventory, visible: Stream[]): Group[] {
  const taskOfSession = new Map<string, Task>();
  for (const t of inv.tasks) if (t.sessionId) taskOfSession.set(t.sessionId, t);
  const sessions = new Map(inv.sessions.map((s) => [s.id, s]));
  const groups = new Map<string, Group>();
  for (const st of visible) {
    const anchor = anchorOf(st);
    const task = anchor ? taskOfSession.get(anchor) : undefined;
    const ses = anchor ? sessions.get(anchor) : undefined;
    const key = task ? `task:${task.id}` : anchor ? `session:${anchor}` : `owner:${st.owner}`;
    const label = task
      ? `task ${task.title} (${task.id})`
      : anchor
        ? `session ${ses?.title ?? ''} (${anchor})`
        : `${st.owner.startsWith('operator:') ? 'operator rooms' : 'owner'} · ${st.owner}`;
    let g = groups.get(key);
    if (!g) {
      g = { key, label, streams: [] };
      groups.set(key, g);
    }
    g.streams.push(st);
  }
  return [...groups.values()].sort((a, b) => a.label.localeCompare(b.label));
}

export const holderLabel = (holder: string, sessions: Map<string, Session>) =>
  holder.startsWith('operator:') ? holder : `${sessions.get(holder)?.title ?? '?'} ${holder.slice(0, 12)}…`;
