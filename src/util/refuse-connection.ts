import type { Socket } from 'node:net';

/**
 * Send `line` (the reason) with a half-close and read nothing more: what the peer still
 * writes stays in the kernel's socket buffers until it stops (its writes wait) and the socket
 * is destroyed after `graceMs`. Reading it only to drop it cost a buffer per read, and a peer
 * that keeps writing past the half-close (as Node's own clients do not) was read in full, 10
 * MiB a peer in the stall attack, and kept alive by it (the timeout counts reads). A peer reading as it writes (any client that waits for answers) has the reason at
 * once; the socket is not destroyed before `graceMs`, so it has that long to read it.
 */
export function refuseConnection(conn: Socket, line: string, graceMs = 1000): void {
  conn.pause();
  conn.end(line);
  conn.setTimeout(graceMs, () => conn.destroy());
}
