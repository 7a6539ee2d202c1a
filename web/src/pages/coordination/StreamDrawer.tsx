import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Confirm } from '../../components/Confirm.tsx';
import { ErrorBox } from '../../components/ErrorBox.tsx';
import { outcome, TextSend } from '../../components/TextSend.tsx';
import { api } from '../../lib/api.ts';
import { clip, time } from '../../lib/format.ts';
import { useEscape } from '../../lib/keys.ts';
import { useMe } from '../../lib/me.ts';
import type { Session, Stream } from '../../lib/types.ts';
import { holderLabel } from './model.ts';
import { useTranscript } from './useTranscript.ts';

/** One stream: members (attach/detach), scrollback + live messages, and posting as the operator. */
export function StreamDrawer({
  stream,
  sessions,
  onClose,
  onChanged,
}: {
  stream: Stream;
  sessions: Session[];
  onClose: () => void;
  /** The stream's roster changed here (joined): the page reloads what it shows. */
  onChanged: () => void;
}) {
  const me = useMe();
  const { messages, more, older, error } = useTranscript(stream.id);
  const [actionError, setActionError] = useState<Error | null>(null);
  const [attachTo, setAttachTo] = useState('');
  const [confirmClose, setConfirmClose] = useState(false);
  const end = useRef<HTMLDivElement>(null);
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const myFd = stream.subscribers.find((s) => s.holder === `operator:${me}` && s.permission.includes('w'));
  const last = messages[messages.length - 1]?.seq;
  // biome-ignore lint/correctness/useExhaustiveDependencies: follow the newest message
  useEffect(() => {
    // In braces: newer browsers return a promise from scrollIntoView, and an effect may return only a cleanup.
    end.current?.scrollIntoView({ block: 'end' });
  }, [last]);
  const act = (p: Promise<unknown>) =>
    p.then(
      () => setActionError(null),
      (e: Error) => setActionError(e),
    );
  const attach = (e: FormEvent) => {
    e.preventDefault();
    if (!attachTo) return;
    act(api('POST', `/v1/streams/${encodeURIComponent(stream.id)}/attach`, { session: attachTo }));
  };
  useEscape(onClose);
  const join = () =>
    act(api('POST', `/v1/streams/${encodeURIComponent(stream.id)}/join`, {}).then(onChanged));
  const detach = (session: string) =>
    act(api('POST', `/v1/streams/${encodeURIComponent(stream.id)}/detach`, { session }));
  const members = stream.subscribers;
  const candidates = sessions.filter(
    (s) => s.status !== 'stopped' && s.id !== 'init' && !members.some((m) => m.holder === s.id),
  );
  return (
    <aside className="drawer" aria-label={`Stream ${stream.name}`} data-testid="drawer">
      <header className="row">
        <h2># {stream.name}</h2>
        <span className="muted">{stream.kind}</span>
        {stream.kind === 'named' && !stream.closedAt ? (
          <button type="button" onClick={() => setConfirmClose(true)}>
            Close room
          </button>
        ) : null}
        <button type="button" onClick={onClose} aria-label="Close drawer">
          ✕
        </button>
      </header>
      <section aria-label="Roster" data-testid="roster">
        <h3>Members ({members.length})</h3>
        <ul className="roster">
          {members.map((m) => (
            <li key={m.id} data-holder={m.holder}>
              {holderLabel(m.holder, byId)}{' '}
              <span className="muted">
                fd {m.fd} · {m.permission} · {m.deliveryMode}
              </span>
              {m.holder.startsWith('ses_') ? (
                <button type="button" onClick={() => detach(m.holder)}>
                  Detach
                </button>
              ) : null}
            </li>
          ))}
        </ul>
        {stream.kind === 'named' ? (
          <form className="attach" onSubmit={attach}>
            <select
              value={attachTo}
              onChange={(e) => setAttachTo(e.target.value)}
              aria-label="Session to attach"
            >
              <option value="">attach a session…</option>
              {candidates.map((s) => (
                <option key={s.id} value={s.id}>
                  {clip(s.title ?? s.id, 40)} ({s.id.slice(0, 14)}…)
                </option>
              ))}
            </select>
            <button type="submit" disabled={!attachTo}>
              Attach
            </button>
          </form>
        ) : null}
      </section>
      <section className="transcript" aria-label="Transcript" data-testid="transcript">
        {more ? (
          <button type="button" onClick={older}>
            Load older
          </button>
        ) : (
          <p className="muted">Start of the stream.</p>
        )}
        <ErrorBox error={error} />
        {messages.map((m) => (
          <div key={m.seq} className={`msg msg-${m.kind}`} data-seq={m.seq}>
            <span className="muted">
              {time(m.ts)} #{m.seq}
            </span>{' '}
            <strong>{holderLabel(m.from, byId)}</strong> <span className="text">{m.text}</span>
          </div>
        ))}
        <div ref={end} />
      </section>
      {myFd ? (
        <TextSend
          label="Message"
          placeholder={`post to #${stream.name} as operator:${me}`}
          button="Post"
          send={(text) => outcome(api('POST', `/v1/fds/${myFd.fd}/write`, { message: text }), setActionError)}
        />
      ) : stream.kind === 'named' && !stream.closedAt ? (
        <p className="row">
          <span className="muted">You hold no fd on this room.</span>
          <button type="button" onClick={join}>
            Join to post
          </button>
        </p>
      ) : (
        <p className="muted">Plumbing streams are written by their sessions; the operator reads them.</p>
      )}
      <ErrorBox error={actionError} />
      {confirmClose ? (
        <Confirm
          text={`Close room #${stream.name}? Its members are detached.`}
          onCancel={() => setConfirmClose(false)}
          onConfirm={() => {
            setConfirmClose(false);
            act(api('DELETE', `/v1/streams/${encodeURIComponent(stream.id)}`));
          }}
        />
      ) : null}
    </aside>
  );
}
