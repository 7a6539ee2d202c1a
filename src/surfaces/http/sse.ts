import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FollowFilter } from '../../kernel/follow.ts';
import type { LogEvent } from '../../store/events.ts';
import type { Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';

const HEARTBEAT_MS = 15_000;

/**
 * The server's open live streams. Closing the server ends them, and any that opens after: a
 * request already past the router when the close began (its auth still reading the store)
 * opens its stream late, and left open it would hold the close until the grace ran out.
 */
export class LiveStreams {
  private readonly open = new Set<() => void>();
  /** The server's close has begun. */
  #closing = false;

  get closing(): boolean {
    return this.#closing;
  }

  /** Track `stop`; called at once when the server is already closing. */
  add(stop: () => void): void {
    if (this.#closing) stop();
    else this.open.add(stop);
  }

  delete(stop: () => void): void {
    this.open.delete(stop);
  }

  closeAll(): void {
    this.#closing = true;
    for (const stop of [...this.open]) stop();
  }
}

const frame = (e: LogEvent) => `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

/**
 * The live event stream (SSE): frames what the kernel's `follow` yields, nothing more.
 * It resumes by cursor (`Last-Event-ID`, else `after`, else from now). Writes wait for the
 * socket to drain, so a slow client holds no more than one event here; `follow` sends it
 * back to the log when it falls behind.
 */
export async function streamEvents(
  warren: Warren,
  principal: Principal,
  req: FastifyRequest,
  reply: FastifyReply,
  filter: FollowFilter & { after?: number },
  /** The server's open live streams, so closing the server can end this one. */
  open?: LiveStreams,
): Promise<void> {
  const lastId = req.headers['last-event-id'];
  // "From now" is pinned to a seq up front, so the client is told where it starts.
  const after =
    (typeof lastId === 'string' && /^\d{1,15}$/.test(lastId) ? Number(lastId) : filter.after) ??
    (await warren.kernel.logHead());
  const ac = new AbortController();
  const stop = () => ac.abort();
  open?.add(stop);

  reply.hijack();
  const res = reply.raw;
  res.on('close', stop);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // The opening `id:` is the resume point before any event arrives: a client that drops
  // before its first event reconnects from here, not from "now" (which would skip the gap).
  res.write(`retry: 1000\nid: ${after}\n: warren live events after seq ${after}\n\n`);
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        ac.signal.removeEventListener('abort', done);
        resolve();
      };
      res.once('drain', done);
      ac.signal.addEventListener('abort', done, { once: true });
    });
  try {
    const { type, session, stream } = filter;
    const events = warren.kernel.follow(principal, { type, session, stream }, after, { signal: ac.signal });
    for await (const e of events) {
      if (!res.write(frame(e))) await drained();
      if (ac.signal.aborted) break;
    }
  } catch (error) {
    req.log.error({ err: error, reqId: req.id }, 'live event stream failed');
  } finally {
    clearInterval(heartbeat);
    open?.delete(stop);
    res.end();
    // Ended by the server's close, the stream takes its connection along: left idle but open,
    // the client's reconnect (`retry:` a second later) would arrive on it and be answered there.
    if (open?.closing) res.socket?.destroySoon();
  }
}
