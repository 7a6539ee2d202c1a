import type { LogEvent } from './types.ts';

/**
 * Reads `/v1/events/live` with fetch, not EventSource: EventSource delivers only the event
 * types it was told about by name, and warren's types are open-ended (plugins add theirs).
 * Each reconnect sends `Last-Event-ID` with the last seq seen, so the server replays what was
 * missed: no gap and no repeat. The server opens each stream with an `id:` of the seq it
 * starts after, so even a stream that drops before its first event resumes from there.
 */
export interface SseHandlers {
  onEvent(e: LogEvent): void;
  onStatus(s: 'live' | 'reconnecting'): void;
  /** The last seq delivered (the resume point). */
  lastSeq(): number;
  /** An `id:` with no event: the stream's position, everything up to it accounted for. */
  onCursor(seq: number): void;
}

export function followLive(h: SseHandlers, retryMs = 1000): () => void {
  const ac = new AbortController();
  // A stream that is open when the network goes away can sit silent for a long time before
  // TCP notices: the browser's offline event ends it at once, and online retries at once.
  let attempt: AbortController | null = null;
  let wake: (() => void) | null = null;
  const offline = () => attempt?.abort();
  const online = () => wake?.();
  window.addEventListener('offline', offline);
  window.addEventListener('online', online);
  ac.signal.addEventListener('abort', () => {
    window.removeEventListener('offline', offline);
    window.removeEventListener('online', online);
  });
  const run = async () => {
    while (!ac.signal.aborted) {
      const current = new AbortController();
      attempt = current;
      const stop = () => current.abort();
      ac.signal.addEventListener('abort', stop, { once: true });
      try {
        if (!navigator.onLine) throw new Error('offline');
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        const last = h.lastSeq();
        if (last > 0) headers['last-event-id'] = String(last);
        const res = await fetch('/v1/events/live', {
          headers,
          signal: current.signal,
          credentials: 'same-origin',
        });
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        h.onStatus('live');
        await readFrames(res.body, current.signal, h);
      } catch {
        // dropped or refused: try again below
      } finally {
        ac.signal.removeEventListener('abort', stop);
        current.abort();
      }
      if (ac.signal.aborted) return;
      h.onStatus('reconnecting');
      await new Promise<void>((r) => {
        const t = setTimeout(done, retryMs);
        function done() {
          clearTimeout(t);
          wake = null;
          r();
        }
        wake = done;
      });
    }
  };
  void run();
  return () => ac.abort();
}

async function readFrames(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  h: Pick<SseHandlers, 'onEvent' | 'onCursor'>,
) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let end = buf.indexOf('\n\n');
    while (end >= 0) {
      const frame = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const lines = frame.split('\n');
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      const id = lines.find((l) => l.startsWith('id: '));
      if (data) h.onEvent(JSON.parse(data) as LogEvent);
      else if (id && /^\d+$/.test(id.slice(4))) h.onCursor(Number(id.slice(4)));
      end = buf.indexOf('\n\n');
    }
  }
}
