import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../kernel/principal.ts';
import type { LogEvent } from '../../store/events.ts';
import type { Warren } from '../../warren.ts';

const PAGE = 1000;
/** A client this far behind is cut off; it reconnects with Last-Event-ID and catches up from the log. */
const MAX_BACKLOG = 10_000;
const HEARTBEAT_MS = 15_000;

export interface LiveFilter {
  after?: number;
  type?: string;
  session?: string;
  stream?: string;
}

/**
 * The live event stream (SSE). It resumes by cursor: from `Last-Event-ID` or `?after=`,
 * it replays the log, then follows commits, with no gap and no repeat at the seam.
 */
export async function streamEvents(
  warren: Warren,
  principal: Principal,
  req: FastifyRequest,
  reply: FastifyReply,
  filter: LiveFilter,
  /** The server's open live streams: each adds its `stop` here, so closing the server can end them. */
  open?: Set<() => void>,
): Promise<void> {
  const lastId = req.headers['last-event-id'];
  let cursor = lastId !== undefined && /^\d+$/.test(String(lastId)) ? Number(lastId) : filter.after;
  if (cursor === undefined) cursor = await warren.store.log.head();

  const wanted = (e: LogEvent) =>
    e.zone === principal.zone &&
    (!filter.type || e.type === filter.type) &&
    (!filter.session || e.session_id === filter.session) &&
    (!filter.stream || e.stream_id === filter.stream);

  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(`retry: 1000\n: warren live events after seq ${cursor}\n\n`);

  let live = false;
  let closed = false;
  const buffered: LogEvent[] = [];
  const send = (e: LogEvent) => {
    if (e.seq <= (cursor as number)) return;
    cursor = e.seq;
    if (wanted(e)) res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  };
  const unsubscribe = warren.store.writer.onCommit((events) => {
    if (closed) return;
    if (!live) {
      buffered.push(...events);
      if (buffered.length > MAX_BACKLOG) stop();
      return;
    }
    for (const e of events) send(e);
    if (res.writableLength > 8 * 1024 * 1024) stop();
  });
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const stop = () => {
    if (closed) return;
    closed = true;
    open?.delete(stop);
    unsubscribe();
    clearInterval(heartbeat);
    res.end();
  };
  req.raw.on('close', stop);
  res.on('close', stop);
  open?.add(stop);

  // Catch up from the log, then drain what committed meanwhile, then go live.
  try {
    for (;;) {
      const page = await warren.store.log.tail(cursor, { limit: PAGE });
      if (closed) return;
      for (const e of page) send(e);
      if (page.length < PAGE) break;
    }
    for (const e of buffered.splice(0)) send(e);
    live = true;
  } catch {
    stop();
  }
}
