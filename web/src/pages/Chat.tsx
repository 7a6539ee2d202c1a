import { ErrorBox } from '../components/ErrorBox.tsx';
import { allPages, api } from '../lib/api.ts';
import type { Session } from '../lib/types.ts';
import { useFetch } from '../lib/useFetch.ts';
import SessionPage from './SessionPage.tsx';

/**
 * The operator's conversation with the root orchestrator: the root task's session when the
 * orchestration plugin runs one, else the oldest live top-level session.
 */
async function rootSession(): Promise<string> {
  const root = await api<{ task: { sessionId: string | null } }>('GET', '/v1/tasks/root').catch(() => null);
  if (root?.task.sessionId && root.task.sessionId !== 'init') return root.task.sessionId;
  const sessions = await allPages<Session>('/v1/sessions', 'sessions');
  const top = sessions
    .filter((s) => s.depth === 1 && s.status !== 'stopped')
    .sort((a, b) => a.createdAt - b.createdAt)[0];
  return top?.id ?? '';
}

export default function Chat() {
  const r = useFetch(rootSession, []);
  if (r.error) return <ErrorBox error={r.error} />;
  if (r.data === null) return <p className="pad muted">Loading…</p>;
  if (!r.data) return <p className="pad muted">No root session is running.</p>;
  return <SessionPage id={r.data} />;
}
