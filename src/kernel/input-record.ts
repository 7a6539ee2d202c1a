import type { Kysely } from 'kysely';
import { type DeliveredMessage, renderInput } from '../runtimes/types.ts';
import type { LogEvent } from '../store/events.ts';
import type { Database } from '../store/schema.ts';
import { parseJson } from '../util/json.ts';

/**
 * An agent's `session.input` (the input a turn took) as the log stores it. The messages it took
 * are already in the log, once each, as their streams' `stream.message` events; the input
 * names them (`seqs`, and `fds`: the fd number each came on) instead of copying their text, so
 * a message written to a room of twenty listeners is stored once, not twenty-one times.
 * Every read of the log (views.ts, follow.ts, the plugins' `eventsOfType`) puts the text back
 * (`withInputText`), rendered as the agent was handed it (`renderInput`).
 *
 * Only messages the kernel itself handed to the session are referenced (the pump remembers
 * them): an input naming anything else, or anything a runtime reports that way, is stored as
 * it came, with its text, and never read as references — a report cannot make the log show a
 * session a message it was not given.
 */
export function recordInput(
  payload: Record<string, unknown>,
  handedFd: (seq: number) => number | undefined,
): Record<string, unknown> {
  const { fds: _forged, ...rest } = payload;
  const verbatim = { ...rest, text: typeof rest.text === 'string' ? rest.text : String(rest.text ?? '') };
  const seqs = rest.seqs;
  if (!Array.isArray(seqs) || seqs.length === 0 || !seqs.every((s) => Number.isSafeInteger(s)))
    return verbatim;
  const fds: number[] = [];
  for (const seq of seqs as number[]) {
    const fd = handedFd(seq);
    if (fd === undefined) return verbatim;
    fds.push(fd);
  }
  const { text: _text, ...others } = rest;
  return { ...others, seqs, fds };
}

/** A stored input that names its messages instead of holding their text. */
const isReference = (e: LogEvent) =>
  e.type === 'session.input' &&
  e.payload.text === undefined &&
  Array.isArray(e.payload.seqs) &&
  Array.isArray(e.payload.fds);

/** Seqs per look-up: well under either backend's limit on bound parameters. */
const CHUNK = 500;

/**
 * `events` with each referencing `session.input` given its text back (new objects: committed
 * events are shared by every listener). A message no longer in the log (retention took it) is
 * shown as such in its place.
 */
export async function withInputText(db: Kysely<Database>, events: readonly LogEvent[]): Promise<LogEvent[]> {
  const refs = events.filter(isReference);
  if (refs.length === 0) return events as LogEvent[];
  const wanted = [...new Set(refs.flatMap((e) => e.payload.seqs as number[]))];
  const found = new Map<number, { actor: string; stream: string; payload: Record<string, unknown> }>();
  for (let i = 0; i < wanted.length; i += CHUNK) {
    const rows = await db
      .selectFrom('events as e')
      .leftJoin('streams as s', 's.id', 'e.stream_id')
      .select(['e.seq', 'e.actor', 'e.stream_id', 'e.payload', 's.name'])
      .where('e.seq', 'in', wanted.slice(i, i + CHUNK))
      .where('e.type', '=', 'stream.message')
      .execute();
    for (const r of rows)
      found.set(Number(r.seq), {
        actor: r.actor,
        stream: r.name ?? r.stream_id ?? '',
        payload: parseJson<Record<string, unknown>>(r.payload, {}),
      });
  }
  return events.map((e) => {
    if (!isReference(e)) return e;
    const seqs = e.payload.seqs as number[];
    const fds = e.payload.fds as number[];
    const messages = seqs.map((seq, i): DeliveredMessage => {
      const m = found.get(seq);
      if (!m)
        return {
          seq,
          fd: fds[i] ?? -1,
          stream: '',
          from: '',
          kind: 'signal',
          text: `[message seq=${seq} is no longer in the log]`,
        };
      const p = m.payload as { text?: string; kind?: 'message' | 'signal' };
      return {
        seq,
        fd: fds[i] ?? -1,
        stream: m.stream,
        from: m.actor,
        text: p.text ?? '',
        kind: p.kind ?? 'message',
      };
    });
    return { ...e, payload: { ...e.payload, text: renderInput(messages) } };
  });
}
