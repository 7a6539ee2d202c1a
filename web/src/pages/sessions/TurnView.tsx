import { time } from '../../lib/format.ts';
import type { LogEvent } from '../../lib/types.ts';
import type { Turn } from './turns.ts';

const json = (v: unknown) => JSON.stringify(v, null, 2);

/** One event of a transcript, drawn by what it is. */
function Item({ e }: { e: LogEvent }) {
  const p = e.payload;
  switch (e.type) {
    case 'session.spawned':
      return (
        <div className="turn-prompt">
          <b>prompt</b> {String(p.prompt ?? '')}
        </div>
      );
    case 'session.input':
      return (
        <div className="turn-prompt">
          <b>input</b> {String(p.text ?? '')}
        </div>
      );
    case 'session.output':
      return <div className="turn-text">{String(p.text ?? '')}</div>;
    case 'session.tool_call':
      return (
        <details className="turn-tool">
          <summary>
            tool call <code>{String(p.name ?? '')}</code>
          </summary>
          <pre>{json(p.input)}</pre>
        </details>
      );
    case 'session.tool_result':
      return (
        <details className="turn-tool">
          <summary>
            tool result {p.isError ? <span className="status status-failed">error</span> : null}
          </summary>
          <pre>{json(p.output ?? p.content ?? p)}</pre>
        </details>
      );
    case 'signal':
      return (
        <div className="turn-signal">
          signal <b>{String(p.signal ?? '')}</b> {p.title ? String(p.title) : ''}{' '}
          {p.status ? String(p.status) : ''}
        </div>
      );
    case 'session.usage':
      return <div className="turn-usage muted">usage {json(p)}</div>;
    case 'session.status':
      return (
        <div className="muted">
          status {String(p.from ?? '')} → {String(p.to ?? '')} {p.reason ? `(${String(p.reason)})` : ''}
        </div>
      );
    default:
      return (
        <div className="muted">
          {e.type} <code>{JSON.stringify(p).slice(0, 300)}</code>
        </div>
      );
  }
}

export function TurnView({ turn, index }: { turn: Turn; index: number }) {
  const first = turn.events[0];
  return (
    <section className="turn" aria-label={`Turn ${index + 1}`}>
      <header className="muted">
        turn {index + 1} · {first ? time(first.ts) : ''}
      </header>
      {turn.events.map((e) => (
        <Item key={e.seq} e={e} />
      ))}
    </section>
  );
}
