import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * The live Streamable HTTP MCP sessions of one server: who owns each, how many each owner
 * holds (with the initializations still under way), and when each expires.
 *
 * A session is busy while any request of its own is open — a call being answered, a
 * long-poll, the client's standing GET stream — and idle otherwise. Idle for `idleMs`, it is
 * closed by a timer of its own, armed when its last open request ends: expiry is on time, not
 * at the next sweep. Clients that never send `DELETE /mcp` (Claude Code does not) and relays
 * killed without a goodbye are reclaimed this way; one that keeps its GET stream open is not
 * idle, however quiet.
 */
export interface McpSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly owner: string;
}

interface Entry extends McpSession {
  /** Requests of this session still open (their responses not yet closed). */
  open: number;
  idle: NodeJS.Timeout | undefined;
}

export class McpSessions {
  private readonly live = new Map<string, Entry>();
  /** Initializations under way per owner: they count against the cap before they have an id. */
  private readonly opening = new Map<string, number>();
  /** The server's close has begun (`closeAll` ran). */
  #closed = false;

  constructor(private readonly idleMs: number) {}

  /** Live sessions, every owner's. */
  get size(): number {
    return this.live.size;
  }

  get(id: string): McpSession | undefined {
    return this.live.get(id);
  }

  /** Sessions `owner` holds, counting the ones it is opening. */
  held(owner: string): number {
    let n = this.opening.get(owner) ?? 0;
    for (const s of this.live.values()) if (s.owner === owner) n++;
    return n;
  }

  /** Count an initialization against `owner` before its first await; the result undoes it. */
  reserve(owner: string): () => void {
    this.opening.set(owner, (this.opening.get(owner) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.opening.get(owner) ?? 1) - 1;
      if (n > 0) this.opening.set(owner, n);
      else this.opening.delete(owner);
    };
  }

  /**
   * A session the server has just made, inside its initialize request (so it starts busy).
   * Once the close has begun it is not kept: an initialize already under way then (its auth or
   * the SDK's import still pending) finishes after `closeAll`, and a session kept now would be
   * closed by nobody. The caller closes the transport it made and the table does not hold.
   */
  add(id: string, session: McpSession, response: NodeJS.EventEmitter): void {
    if (this.#closed) return;
    const entry: Entry = { ...session, open: 0, idle: undefined };
    this.live.set(id, entry);
    this.track(id, entry, response);
  }

  /** A request on session `id` is under way until `response` closes. */
  touch(id: string, response: NodeJS.EventEmitter): void {
    const entry = this.live.get(id);
    if (entry) this.track(id, entry, response);
  }

  /** Forget a session (it closed: DELETE, expiry, or the server's own close). */
  remove(id: string): void {
    const entry = this.live.get(id);
    if (!entry) return;
    clearTimeout(entry.idle);
    this.live.delete(id);
  }

  async closeAll(): Promise<void> {
    this.#closed = true;
    const all = [...this.live.values()];
    for (const id of [...this.live.keys()]) this.remove(id);
    await Promise.allSettled(all.map((s) => s.transport.close()));
  }

  private track(id: string, entry: Entry, response: NodeJS.EventEmitter): void {
    entry.open++;
    clearTimeout(entry.idle);
    entry.idle = undefined;
    response.once('close', () => {
      entry.open--;
      if (entry.open > 0 || this.live.get(id) !== entry) return;
      entry.idle = setTimeout(() => this.expire(id, entry), this.idleMs);
      entry.idle.unref();
    });
  }

  private expire(id: string, entry: Entry): void {
    if (this.live.get(id) !== entry || entry.open > 0) return;
    this.remove(id);
    void entry.transport.close().catch(() => {});
  }
}
