import type pg from 'pg';

/**
 * The lease's own PostgreSQL connection, every call on it bounded by a deadline well inside
 * the lease. A path that swallows packets (a partition, a dead switch) makes a statement hang,
 * not fail: on a pooled connection the renewal would wait for the path to heal, and "lease not
 * renewed" would be learnt only then. Here a call that misses its deadline fails on time and
 * its connection is destroyed (nothing it sent is applied late through it); the next call opens
 * a fresh one. The server bounds the statement as well (`statement_timeout`), for a lock wait.
 */
export class LeaseClient {
  private client: pg.Client | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly schema: string | undefined,
    /** The longest any call may take: the server's `statement_timeout` and the connect bound. */
    readonly maxDeadlineMs: number,
    private readonly applicationName: string,
  ) {}

  /** Run one statement within `deadlineMs` (connect included), or fail (and drop the connection). */
  async query<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
    deadlineMs: number,
  ): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new Error('lease connection closed');
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        // After a stall of this process the timer runs before pending I/O is read: let an
        // answer already in the socket win (setImmediate runs after the poll phase).
        () =>
          setImmediate(() =>
            reject(new Error(`database unreachable: a lease call took longer than ${deadlineMs} ms`)),
          ),
        deadlineMs,
      );
    });
    try {
      const client = await Promise.race([this.open(), late]);
      return await Promise.race([client.query<R>(text, values), late]);
    } catch (error) {
      this.drop();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async open(): Promise<pg.Client> {
    if (this.client) return this.client;
    const { default: pgm } = await import('pg');
    const options = [
      this.schema ? `-c search_path=${this.schema}` : '',
      `-c statement_timeout=${Math.max(1, Math.floor(this.maxDeadlineMs))}`,
    ]
      .filter(Boolean)
      .join(' ');
    const client = new pgm.Client({
      connectionString: this.url,
      options,
      application_name: this.applicationName.slice(0, 63),
      connectionTimeoutMillis: this.maxDeadlineMs,
      keepAlive: true,
    });
    // Without a listener a lost connection's 'error' event ends the process; the next call
    // fails and opens another.
    client.on('error', () => {
      if (this.client === client) this.client = undefined;
    });
    client.on('end', () => {
      if (this.client === client) this.client = undefined;
    });
    this.client = client;
    try {
      await client.connect();
    } catch (error) {
      if (this.client === client) this.client = undefined;
      throw error;
    }
    return client;
  }

  /** Destroy the connection now: `end()` would wait for a path that does not answer. */
  private drop(): void {
    const c = this.client;
    this.client = undefined;
    if (!c) return;
    (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    c.end().catch(() => {});
  }

  close(): void {
    this.closed = true;
    this.drop();
  }
}
