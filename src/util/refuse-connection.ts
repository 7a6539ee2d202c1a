import type { Socket } from 'node:net';

/**
 * Send `line` (the reason) with a half-close, then let the peer close its end. What it still
 * writes is read and dropped, never kept: destroying the socket under a peer that is still
 * writing makes its write fail first, and a peer that drops its socket on that error never
 * reads the reason already in its queue. A peer that neither reads nor closes is destroyed
 * after `graceMs`.
 */
export function refuseConnection(conn: Socket, line: string, graceMs = 1000): void {
  conn.on('data', discard);
  conn.resume();
  conn.end(line);
  conn.setTimeout(graceMs, () => conn.destroy());
}

function discard(): void {}
