/**
 * Fresh PostgreSQL test schemas, made ahead and dropped behind. A test's new schema is a clone
 * of the migrated template (pg-template.ts) made before it was asked for, renamed to the name
 * asked for (one catalog row: the clone's tables keep no name of their schema); the next clone
 * is made while that test runs. A suite's schemas are dropped after it, not while the next one
 * waits. Both were in every PostgreSQL test's path: ~160 ms to clone and ~35 ms to drop on a
 * quiet machine, some 450 times a run. Each schema is still used by one test only, fresh.
 *
 * One pool a test process. When the process has nothing left to do, it drops what it still
 * holds (clones not handed out, drops under way) before it exits; a killed process's leftovers
 * go with a later run's stale-schema sweep (stores.ts).
 */
import pg from 'pg';
import { cloneTemplate } from './pg-template.ts';

export class SchemaPool {
  /** Clones under way or done, not handed out yet: each its schema's name, or null if it failed. */
  private readonly ready: Array<Promise<string | null>> = [];
  /** Work the process must see finished before it exits. */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly template: Parameters<typeof cloneTemplate>[2] = {};
  private exiting = false;

  constructor(
    private readonly url: string,
    /** A fresh schema's name (stores.ts: its birth time is in it, for the stale sweep). */
    private readonly name: () => string,
    /** Clones kept ready: a test that opens two stores at once finds both. */
    private readonly ahead = 2,
  ) {
    process.on('beforeExit', () => void this.drain());
  }

  /**
   * Make `schema` (which must not exist yet) a fresh migrated schema. False when it could not:
   * the caller's open then migrates the schema itself.
   */
  async make(schema: string): Promise<boolean> {
    const next = this.ready.shift();
    this.fill();
    const made = next ? await next : null;
    if (made !== null) {
      try {
        await this.sql(`alter schema "${made}" rename to "${schema}"`);
        return true;
      } catch {
        this.drop([made]);
      }
    }
    return cloneTemplate(this.url, schema, this.template);
  }

  /** Drop these schemas; the caller goes on while it happens. */
  drop(schemas: readonly string[]): void {
    if (schemas.length === 0) return;
    this.track(
      this.sql(schemas.map((s) => `drop schema if exists "${s}" cascade`).join(';\n')).catch(() => {}),
    );
  }

  private fill(): void {
    while (!this.exiting && this.ready.length < this.ahead) {
      const schema = this.name();
      const clone = cloneTemplate(this.url, schema, this.template).then((ok) => (ok ? schema : null));
      this.ready.push(clone);
      this.track(clone);
    }
  }

  private track(work: Promise<unknown>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work)).catch(() => {});
  }

  /** The process is about to exit: drop the clones nobody took, and finish every drop. */
  private async drain(): Promise<void> {
    if (this.exiting) return;
    this.exiting = true;
    const left = await Promise.all(this.ready.splice(0));
    this.drop(left.filter((s): s is string => s !== null));
    await Promise.allSettled([...this.pending]);
  }

  private async sql(text: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('error', () => {});
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end().catch(() => {});
    }
  }
}
