import { createHash } from 'node:crypto';
import type pg from 'pg';
import { type Notice, readNotice } from '../store/notice.ts';

/**
 * One dedicated PostgreSQL connection per node, outside the pools: it LISTENs for commits and
 * holds the session-level advisory locks of cluster-wide phases, which PostgreSQL releases by
 * itself if the node dies. Channel and lock names are scoped by schema: several warrens
 * (tests) may share one database.
 */
export class ClusterConnection {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  /** The NOTIFY channel commits are announced on. */
  readonly channel: string;
  private readonly scope: string;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly schema: string | undefined,
    private readonly onNotify: (notice: Notice) => void,
    private readonly onLost: () => void,
  ) {
    this.scope = `warren:${schema ?? 'public'}`;
    this.channel = `warren_${createHash('sha256').update(this.scope).digest('hex').slice(0, 20)}`;
  }

  /** The connection, (re)opened and listening; a reconnect reports `onLost` (notifications may have been missed). */
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
      ...(this.schema ? { options: `-c search_path=${this.schema}` } : {}),
    });
    client.on('notification', (n) => {
      if (n.channel === this.channel) this.onNotify(readNotice(n.payload ?? '0'));
    });
    const drop = () => {
      if (this.client === client) this.client = undefined;
      if (!this.closed) this.onLost();
    };
    client.on('error', drop);
    client.on('end', drop);
    await client.connect();
    await client.query(`listen "${this.channel}"`);
    this.client = client;
    return client;
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
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }
}
