import { parseJson } from '../util/json.ts';
import type { LogEvent } from './events.ts';

/**
 * What a commit announces on PostgreSQL with several nodes (docs/scaling.md): its last seq,
 * the node that committed it, and — when they fit in a notification — the events themselves,
 * so another node can fan them out without reading them back (one round trip less on the
 * cross-node path). Only a shortcut: the events are exactly the committed rows (NOTIFY is
 * sent only if the transaction commits), a node takes them only when they follow its cursor
 * with no gap, and anything else is read from the log by cursor as before.
 *
 * The payload is `<last seq>` or `<last seq> <json>`; the seq is written by the statement
 * that takes it, the rest (`commitNotice`) by the writer before it.
 */

/** PostgreSQL refuses a payload of 8000 bytes or more; the seq and a margin take the rest. */
const MAX_BODY_BYTES = 7900;

/** One event as the writer has it before its seq is known (its payload already JSON text). */
export interface NoticeRow {
  id: string;
  zone: string;
  type: string;
  actor: string;
  session_id: string | null;
  stream_id: string | null;
  payload: string;
}

/** The part after the seq: `' ' + json`, or `''` when the batch does not fit. */
export function commitNotice(node: string, ts: number, rows: readonly NoticeRow[]): string {
  const parts: string[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    // The payload is JSON already: embedded as it is, not encoded twice.
    parts[i] =
      `[${JSON.stringify(r.id)},${JSON.stringify(r.zone)},${JSON.stringify(r.type)},${JSON.stringify(r.actor)},` +
      `${JSON.stringify(r.session_id)},${JSON.stringify(r.stream_id)},${r.payload}]`;
  }
  const body = ` {"node":${JSON.stringify(node)},"ts":${ts},"e":[${parts.join(',')}]}`;
  return Buffer.byteLength(body) > MAX_BODY_BYTES ? '' : body;
}

export interface Notice {
  /** The last seq the commit took. */
  seq: number;
  /** The committing node, when the notice says. */
  node?: string;
  /** The commit's events, seq order, ending at `seq`; absent when they did not fit. */
  events?: LogEvent[];
}

type Row = [string, string, string, string, string | null, string | null, Record<string, unknown>];

/** Read a notification's payload; a malformed body leaves only the seq (the log is read instead). */
export function readNotice(payload: string): Notice {
  const space = payload.indexOf(' ');
  const seq = Number(space < 0 ? payload : payload.slice(0, space));
  if (space < 0) return { seq };
  const body = parseJson<{ node?: unknown; ts?: unknown; e?: unknown } | null>(
    payload.slice(space + 1),
    null,
  );
  if (!body || typeof body.node !== 'string' || typeof body.ts !== 'number' || !Array.isArray(body.e))
    return { seq };
  const rows = body.e as Row[];
  const first = seq - rows.length + 1;
  const ts = body.ts;
  const events = rows.map(
    (r, i): LogEvent => ({
      seq: first + i,
      id: r[0],
      zone: r[1],
      ts,
      type: r[2],
      actor: r[3],
      session_id: r[4],
      stream_id: r[5],
      payload: r[6] ?? {},
    }),
  );
  return { seq, node: body.node, events };
}
