import { createHash } from 'node:crypto';
import type pg from 'pg';
import { CONNECT_TIMEOUT_MS } from '../store/dialect.ts';
import { type Notice, readNotice } from '../store/notice.ts';

/**
 * One dedicated PostgreSQL connection per node, outside the pools: it LISTENs for commits and
 * holds the session-level advisory locks of cluster-wide phases, which PostgreSQL releases by
 * itself if the node dies. Channel and lock names are scoped by schema: several warrens
 * (tests) may share one database.
 */
/** The first retry after the connection is lost, and the cap its backoff doubles up to. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;

export class ClusterConnection {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private backoff = RETRY_FIRST_MS;
  /** The NOTIFY channel commits are announced on. */
  readonly channel: string;
  private readonly scope: string;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly schema: string | undefined,
    private readonly onNotify: (notice: Notice) => void,
    /** Listening again after a loss: notifications may have been missed meanwhile. */
    private readonly onBack: () => void,
    /** The connection was lost, or a reconnect failed (retried with backoff all the same). */
    private readonly onError: (error: unknown) => void,
    /** Its `application_name`, to find (and end) this node's connections in pg_stat_activity. */
    private readonly applicationName = 'warren',
  ) {
    this.scope = `warren:${schema ?? 'public'}`;
    this.channel = `warren_${createHash('sha256').update(this.scope).digest('hex').slice(0, 20)}`;
  }

  /** The connection, (re)opened and listening. */
  get(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('cluster connection closed'));
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const { default: pgm } = await import('pg');
    const client = new pgm.Client({
      connectionString: this.url,
      application_name: this.applicationName.slice(0, 63),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      ...(this.schema ? { options: `-c search_path=${this.schema}` } : {}),
    });
    client.on('notification', (n) => {
      if (n.channel === this.channel) this.onNotify(readNotice(n.payload ?? '0'));
    });
    // Both 'error' and 'end' come when the server ends the connection: the first one counts.
    // A listener on 'error' must be there from the start: without one the event ends the process.
    let gone = false;
    const drop = (error: unknown) => {
      if (gone) return;
      gone = true;
      if (this.client === client) this.client = undefined;
      if (this.closed) return;
      this.onError(error ?? new Error('cluster connection ended'));
      this.reopen();
    };
    client.on('error', drop);
    client.on('end', () => drop(undefined));
    try {
      await client.connect();
      await client.query(`listen "${this.channel}"`);
    } catch (error) {
      gone = true; // this attempt's failure is the caller's; the retry is `reopen`'s
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      throw new Error('cluster connection closed');
    }
    this.client = client;
    return client;
  }

  /**
   * Open it again, with backoff, until it listens: the node must hear the others' commits
   * again on its own (the poll covers the gap meanwhile), not only at its next advisory lock.
   */
  private reopen(): void {
    if (this.retry || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.get().then(
        () => {
          this.backoff = RETRY_FIRST_MS;
          this.onBack();
        },
        (error) => {
          if (this.closed) return;
          this.backoff = Math.min(this.backoff * 2, RETRY_MAX_MS);
          this.onError(error);
          this.reopen();
        },
      );
    }, this.backoff);
    this.retry.unref();
  }

  /** Run `fn` under the advisory lock `name` if nobody holds it; false when another node does. */
  async once(name: string, fn: () => Promise<void>): Promise<boolean> {
    const client = await this.get();
    const got = await client.query<{ ok: boolean }>(
      'select pg_try_advisory_lock(hashtext($1), hashtext($2)) as ok',
      [this.scope, name],
    );
    if (!got.rows[0]?.ok) return false;
    try {
      await fn();
    } finally {
      await client
        .query('select pg_advisory_unlock(hashtext($1), hashtext($2))', [this.scope, name])
        .catch(() => {}); // a dead connection released it already
    }
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }
}
