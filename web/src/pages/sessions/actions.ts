import { api } from '../../lib/api.ts';

/** The session actions the UI offers, each one syscall over REST. */
export type Action = 'send' | 'kill' | 'kill-graceful' | 'suspend' | 'resume';

export const ACTIONS: { action: Action; label: string; confirm: (title: string) => string }[] = [
  { action: 'suspend', label: 'Suspend', confirm: (t) => `Suspend ${t}?` },
  { action: 'resume', label: 'Resume', confirm: (t) => `Resume ${t}?` },
  {
    action: 'kill-graceful',
    label: 'Kill (graceful)',
    confirm: (t) => `Ask ${t} to stop gracefully (SIGTERM)?`,
  },
  { action: 'kill', label: 'Kill', confirm: (t) => `Kill ${t} now?` },
];

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
