import { api } from '../../lib/api.ts';
import type { Session } from '../../lib/types.ts';

/** The session actions the UI offers, each one syscall over REST. */
export type Action = 'send' | 'kill' | 'kill-graceful' | 'suspend' | 'resume';

/** Kills stop sessions for good and ask first; suspend and resume are undone by each other. */
export const ACTIONS: { action: Action; label: string; destructive: boolean }[] = [
  { action: 'suspend', label: 'Suspend', destructive: false },
  { action: 'resume', label: 'Resume', destructive: false },
  { action: 'kill-graceful', label: 'Kill (graceful)', destructive: true },
  { action: 'kill', label: 'Kill', destructive: true },
];

/**
 * The live sessions a kill of `id` stops, as the kernel ends them: SIGKILL tears down what it
 * owns, so its whole live subtree goes; SIGTERM ends it as `terminated`, and each live child
 * goes by its parentClose: terminate (killed, with its subtree), sigterm (in turn), reparent (stays).
 */
export function killReach(id: string, sessions: Session[], action: Action): number {
  const kids = new Map<string, Session[]>();
  for (const s of sessions) {
    if (!s.parentId || s.status === 'stopped') continue;
    kids.set(s.parentId, [...(kids.get(s.parentId) ?? []), s]);
  }
  const kill = (p: string): number => 1 + (kids.get(p) ?? []).reduce((n, c) => n + kill(c.id), 0);
  const term = (p: string): number =>
    1 +
    (kids.get(p) ?? []).reduce(
      (n, c) =>
        n + (c.parentClose === 'terminate' ? kill(c.id) : c.parentClose === 'sigterm' ? term(c.id) : 0),
      0,
    );
  return action === 'kill' ? kill(id) : term(id);
}

export function confirmText(action: Action, title: string, reach: number): string {
  const more =
    reach > 1 ? ` This stops ${reach} sessions: it and ${reach - 1} below it.` : ' This stops 1 session.';
  return action === 'kill'
    ? `Kill ${title} now (SIGKILL)?${more}`
    : `Ask ${title} to stop gracefully (SIGTERM, then SIGKILL past the grace)?${more}`;
}

export function runAction(id: string, action: Action, text?: string): Promise<unknown> {
  const base = `/v1/sessions/${encodeURIComponent(id)}`;
  switch (action) {
    case 'send':
      return api('POST', `${base}/send`, { text: text ?? '' });
    case 'kill':
      return api('POST', `${base}/kill`, {});
    case 'kill-graceful':
      return api('POST', `${base}/kill`, { graceful: true });
    case 'suspend':
      return api('POST', `${base}/suspend`, {});
    case 'resume':
      return api('POST', `${base}/resume`, {});
  }
}
