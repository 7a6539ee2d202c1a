import { time } from '../../lib/format.ts';
import type { LogEvent } from '../../lib/types.ts';
import type { Turn } from './turns.ts';

const json = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** A tool call, collapsed: its name in the summary, its input and (paired by id) its result inside. */
function Tool({ call, result }: { call: LogEvent; result: LogEvent | undefined }) {
  const p = call.payload;
  const r = result?.payload;
  const failed = r && (r.isError || r.status === 'failed' || r.error);
  return (
    <details className="turn-tool" data-tool={str(p.name ?? p.tool ?? p.title)}>
      <summary>
        <span aria-hidden="true">⚙</span> <code>{str(p.name ?? p.tool ?? p.title)}</code>{' '}
        {!r ? (
          <span className="muted">…</span>
        ) : failed ? (
          <span className="status status-failed">error</span>
        ) : null}
      </summary>
      <div className="muted">input</div>
      <pre className="wrap">{json(p.input ?? p.arguments ?? p.command ?? p)}</pre>
      {r ? (
        <>
          <div className="muted">result</div>
          <pre className="wrap">{json(r.text ?? r.output ?? r.content ?? r.error ?? r)}</pre>
        </>
      ) : null}
    </details>
  );
}

/** One event of a transcript, drawn by what it is. */
function Item({ e, result }: { e: LogEvent; result: LogEvent | undefined }) {
  const p = e.payload;
  switch (e.type) {
    case 'session.spawned':
      return (
        <div className="turn-prompt">
          <b>prompt</b> {str(p.prompt)}
        </div>
      );
    case 'session.input':
      return (
        <div className="turn-prompt">
          <b>input</b> {str(p.text)}
        </div>
      );
    case 'session.output':
      return <div className="turn-text">{str(p.text)}</div>;
    case 'session.thought':
      return <div className="turn-text muted">{str(p.text)}</div>;
    case 'session.tool_call':
      return <Tool call={e} result={result} />;
    case 'session.tool_result':
      return <Tool call={e} result={e} />;
    case 'signal':
      return (
        <span className="chip chip-signal" data-signal={str(p.signal)}>
          <span aria-hidden="true">⚡</span> {str(p.signal)}
          {p.child ? ` ${str(p.child).slice(0, 16)}` : ''} {p.status ? str(p.status) : ''}
        </span>
      );
    case 'session.status':
      return (
        <span className="chip" data-status={str(p.to)}>
          {str(p.from)} → {str(p.endReason ?? p.to)} {p.reason ? `(${str(p.reason)})` : ''}
        </span>
      );
    case 'session.error':
    case 'session.notice':
      return <div className="turn-notice wrap">{str(p.message ?? p.text ?? JSON.stringify(p))}</div>;
    default:
      return (
        <div className="muted internal wrap" data-internal={e.type}>
          {e.type} <code>{JSON.stringify(p)}</code>
        </div>
      );
  }
}

export function TurnView({
  turn,
  index,
  results,
  claimed,
}: {
  turn: Turn;
  index: number;
  results: Map<number, LogEvent>;
  claimed: Set<number>;
}) {
  const first = turn.events[0];
  return (
    <section className="turn" aria-label={`Turn ${index + 1}`}>
      <header className="muted">
        turn {index + 1} · {first ? time(first.ts) : ''}
      </header>
      {turn.events
        .filter((e) => !claimed.has(e.seq))
        .map((e) => (
          <Item key={e.seq} e={e} result={results.get(e.seq)} />
        ))}
    </section>
  );
}
