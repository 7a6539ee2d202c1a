import { useCallback, useEffect, useState } from 'react';
import { api, qs } from '../../lib/api.ts';
import { useLiveHub, useOnReconnect } from '../../lib/live.tsx';
import type { LogEvent, Message } from '../../lib/types.ts';

const PAGE = 50;

export const messageOf = (e: LogEvent): Message => ({
  seq: e.seq,
  ts: e.ts,
  from: e.actor,
  text: String(e.payload.text ?? ''),
  kind: typeof e.payload.kind === 'string' ? e.payload.kind : 'message',
});

/**
 * A stream's transcript: the durable scrollback (paged backwards by seq) merged with live
 * messages. Live ones are listened for before the first page is read, and both land in one
 * map keyed by seq, so a message at the seam shows exactly once whichever way it arrived.
 */
export function useTranscript(streamId: string) {
  const hub = useLiveHub();
  const [bySeq, setBySeq] = useState(() => new Map<number, Message>());
  const [more, setMore] = useState(true);
  const [error, setError] = useState<Error | null>(null);
  const add = useCallback((msgs: Message[]) => {
    setBySeq((prev) => {
      const next = new Map(prev);
      for (const m of msgs) next.set(m.seq, m);
      return next;
    });
  }, []);
  const page = useCallback(
    async (before?: number) => {
      try {
        const r = await api<{ messages: Message[] }>(
          'GET',
          `/v1/streams/${encodeURIComponent(streamId)}/transcript${qs({ before, limit: PAGE })}`,
        );
        add(r.messages);
        setError(null);
        if (r.messages.length < PAGE) setMore(false);
      } catch (e) {
        setError(e as Error);
      }
    },
    [streamId, add],
  );
  useEffect(() => {
    setBySeq(new Map());
    setMore(true);
    setError(null);
    const off = hub.subscribe((e) => {
      if (e.type === 'stream.message' && e.stream_id === streamId) add([messageOf(e)]);
    });
    void page();
    return off;
  }, [hub, streamId, page, add]);
  const messages = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  // The latest page again after a reconnect: merged by seq, so nothing shows twice.
  useOnReconnect(() => void page(), error !== null);
  const older = () => void page(messages[0]?.seq);
  return { messages, more, older, error };
}
