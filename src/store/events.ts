/** What the log holds: one row per state change, in commit order. */
export interface NewEvent {
  zone: string;
  type: string;
  /** Who did it: a session id, `operator:<name>`, or `kernel`. */
  actor: string;
  /** The session the event is about, if any: the per-session view selects on it. */
  session_id?: string | null;
  /** The stream the event is about, if any: the transcript selects on it. */
  stream_id?: string | null;
  payload?: Record<string, unknown>;
}

export interface LogEvent {
  seq: number;
  id: string;
  zone: string;
  ts: number;
  type: string;
  actor: string;
  session_id: string | null;
  stream_id: string | null;
  payload: Record<string, unknown>;
}

/** Filled in when the batch holding the event commits. */
export class EventRef {
  seq = 0;
  id = '';
  ts = 0;
}
