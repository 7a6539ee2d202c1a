import { useState } from 'react';
import { Confirm } from '../../components/Confirm.tsx';
import { ErrorBox } from '../../components/ErrorBox.tsx';
import { outcome, TextSend } from '../../components/TextSend.tsx';
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
  const [error, setError] = useState<Error | null>(null);
  const title = `${session.title ?? session.id} (${session.id})`;
  const run = (action: Action, message?: string) =>
    outcome(
      runAction(session.id, action, message).then(() => onDone?.()),
      setError,
    );
  const stopped = session.status === 'stopped';
  return (
    <div className="actions">
      <TextSend
        label="Message to send"
        placeholder="send a message…"
        button="Send"
        disabled={stopped}
        send={(text) => run('send', text)}
      />
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
