import type { Socket } from 'node:net';

/**
 * Send `line` (the reason) with a half-close and read nothing more: what the peer still
 * writes stays in the kernel's socket buffers until it stops (its writes wait) and the socket
 * is destroyed after `graceMs`. Reading it only to drop it cost a buffer per read: 100 peers
 * flooding 10 MiB each had the server allocate ~1 GB in 0.3 s, a full garbage collection per
 * 64 MiB. A peer reading as it writes (any client that waits for answers) has the reason at
 * once; the socket is not destroyed before `graceMs`, so it has that long to read it.
 */
export function refuseConnection(conn: Socket, line: string, graceMs = 1000): void {
  conn.pause();
  conn.end(line);
  conn.setTimeout(graceMs, () => conn.destroy());
}
