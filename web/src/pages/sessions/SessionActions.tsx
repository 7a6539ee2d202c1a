import { type FormEvent, useState } from 'react';
import { Confirm } from '../../components/Confirm.tsx';
import { ErrorBox } from '../../components/ErrorBox.tsx';
import type { Session } from '../../lib/types.ts';
import { ACTIONS, type Action, confirmText, killReach, runAction } from './actions.ts';

/**
 * Send / suspend / resume / kill for one session. Sending is what the page is for: it goes at
 * once. Kills ask first and say how many sessions they stop (`sessions`: the tree it is in).
 */
export function SessionActions({
  session,
  sessions,
  onDone,
}: {
  session: Session;
  sessions: Session[];
  onDone?: () => void;
}) {
  const [pending, setPending] = useState<Action | null>(null);
  const [text, setText] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const title = `${session.title ?? session.id} (${session.id})`;
  const run = (action: Action, message?: string) =>
    runAction(session.id, action, message).then(
      () => {
        setError(null);
        if (action === 'send') setText('');
        onDone?.();
      },
      (e: Error) => setError(e),
    );
  const send = (e: FormEvent) => {
    e.preventDefault();
    if (text.trim()) void run('send', text);
  };
  const stopped = session.status === 'stopped';
  return (
    <div className="actions">
      <form className="inline" onSubmit={send}>
        <input
          aria-label="Message to send"
          placeholder="send a message…"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit" disabled={!text.trim() || stopped}>
          Send
        </button>
      </form>
      {ACTIONS.map((a) => (
        <button
          key={a.action}
          type="button"
          className={a.destructive ? 'danger' : undefined}
          disabled={stopped}
          onClick={() => (a.destructive ? setPending(a.action) : void run(a.action))}
        >
          {a.label}
        </button>
      ))}
      <ErrorBox error={error} />
      {pending ? (
        <Confirm
          text={confirmText(pending, title, killReach(session.id, sessions, pending))}
          onCancel={() => setPending(null)}
          onConfirm={() => {
            const p = pending;
            setPending(null);
            void run(p);
          }}
        />
      ) : null}
    </div>
  );
}
