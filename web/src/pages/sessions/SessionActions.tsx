import { type FormEvent, useState } from 'react';
import { Confirm } from '../../components/Confirm.tsx';
import { ErrorBox } from '../../components/ErrorBox.tsx';
import type { Session } from '../../lib/types.ts';
import { ACTIONS, type Action, runAction } from './actions.ts';

/** Send / suspend / resume / kill for one session, each behind a confirmation. */
export function SessionActions({ session, onDone }: { session: Session; onDone?: () => void }) {
  const [pending, setPending] = useState<{ action: Action; text?: string } | null>(null);
  const [text, setText] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const title = `${session.title ?? session.id} (${session.id})`;
  const send = (e: FormEvent) => {
    e.preventDefault();
    if (text.trim()) setPending({ action: 'send', text });
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
          disabled={stopped}
          onClick={() => setPending({ action: a.action })}
        >
          {a.label}
        </button>
      ))}
      <ErrorBox error={error} />
      {pending ? (
        <Confirm
          text={
            pending.action === 'send'
              ? `Send to ${title}: “${pending.text}”?`
              : (ACTIONS.find((a) => a.action === pending.action)?.confirm(title) ?? '')
          }
          onCancel={() => setPending(null)}
          onConfirm={() => {
            const p = pending;
            setPending(null);
            runAction(session.id, p.action, p.text).then(
              () => {
                setError(null);
                if (p.action === 'send') setText('');
                onDone?.();
              },
              (e: Error) => setError(e),
            );
          }}
        />
      ) : null}
    </div>
  );
}
