import pg from 'pg';
import { cloneTemplate, refillSql, type Template } from './pg-template.ts';

/**
 * PostgreSQL test schemas used again within one test process. A fresh schema costs a clone of
 * the migrated template (~280 ms of DDL) and a drop after its suite (~100 ms), for every warren
 * a test opens on PostgreSQL: most of what the PostgreSQL half costs beyond the SQLite one. A
 * schema a finished suite leaves is instead emptied back to the template's rows (a few ms) and
 * handed to the next suite that asks.
 *
 * Kept only if its shape still equals a fresh clone's (a test may add triggers or tables, or
 * run migrations of its own), while it is young (other runs' housekeeping drops test schemas
 * born over an hour ago), and up to `max`; everything else is dropped as before, and what is
 * kept is dropped when the process ends. Only schemas whose suite has ended come back, after
 * its hooks have closed its stores and stopped its servers: nothing still writes to them.
 */
export class SchemaPool {
  private readonly free: string[] = [];
  /** The template and a fresh clone's shape, once this process has cloned one. */
  private readonly memo: { template?: Promise<Template | null> } = {};
  private shape: string | undefined;
  private draining = false;

  constructor(
    private readonly url: string,
    private readonly max = 16,
    private readonly maxAgeMs = 30 * 60 * 1000,
  ) {}

  /** A schema ready to use, made from the template: one kept, or none (then clone one). */
  take(): string | undefined {
    return this.free.pop();
  }

  /** Make `schema` (which must not exist) from the template. False: leave it to the migrations. */
  async clone(schema: string): Promise<boolean> {
    if (!(await cloneTemplate(this.url, schema, this.memo))) return false;
    if (this.shape === undefined) {
      const client = await this.connect();
      try {
        this.shape = await shapeOf(client, schema);
      } finally {
        await client.end().catch(() => {});
      }
    }
    return true;
  }

  /**
   * Schemas of an ended suite: those made from the template (`fromTemplate`) are emptied and
   * kept when they still can be; every other one is dropped.
   */
  async release(
    schemas: readonly string[],
    fromTemplate: ReadonlySet<string>,
    bornAt: (s: string) => number,
  ) {
    if (schemas.length === 0) return;
    const template = this.memo.template ? await this.memo.template : null;
    const client = await this.connect();
    try {
      for (const schema of schemas) {
        const keep =
          template !== null &&
          this.shape !== undefined &&
          fromTemplate.has(schema) &&
          this.free.length < this.max &&
          Date.now() - bornAt(schema) < this.maxAgeMs &&
          (await reset(client, schema, template, this.shape));
        if (keep) this.free.push(schema);
        else await client.query(`drop schema if exists "${schema}" cascade`);
      }
    } finally {
      await client.end().catch(() => {});
    }
    if (this.free.length > 0 && !this.draining) {
      this.draining = true;
      // The loop has emptied: the tests are done. What this starts keeps the process alive until it ends.
      process.once('beforeExit', () => void this.drain());
    }
  }

  /** Drop every kept schema. */
  async drain(): Promise<void> {
    const schemas = this.free.splice(0);
    if (schemas.length === 0) return;
    const client = await this.connect();
    try {
      await client.query(`drop schema if exists ${schemas.map((s) => `"${s}"`).join(', ')} cascade`);
    } catch {
      // Left to the next run's housekeeping (test schemas over an hour old).
    } finally {
      await client.end().catch(() => {});
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('error', () => {});
    await client.connect();
    return client;
  }
}

/**
 * A schema's shape, without its name: its relations and their columns, its constraints,
 * triggers and functions. Two clones of one template have the same shape; a trigger or a
 * table a test added, or a migration it ran, changes it.
 */
async function shapeOf(client: pg.Client, schema: string): Promise<string> {
  const { rows } = await client.query<{ shape: string | null }>(
    `select md5(string_agg(x, ',' order by x)) as shape from (
       select 'r:' || c.relname || ':' || c.relkind::text as x from pg_class c where c.relnamespace = $1::regnamespace
       union all
       select 'a:' || c.relname || '.' || a.attname || ':' || format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull
         from pg_attribute a join pg_class c on c.oid = a.attrelid
         where c.relnamespace = $1::regnamespace and a.attnum > 0 and not a.attisdropped
       union all
       select 't:' || t.tgname from pg_trigger t join pg_class c on c.oid = t.tgrelid
         where c.relnamespace = $1::regnamespace and not t.tgisinternal
       union all
       select 'k:' || conname from pg_constraint where connamespace = $1::regnamespace
       union all
       select 'f:' || proname from pg_proc where pronamespace = $1::regnamespace
     ) parts`,
    [`"${schema}"`],
  );
  return rows[0]?.shape ?? '';
}

/** Empty `schema` back to the template's rows, if its shape is still the template's. */
async function reset(client: pg.Client, schema: string, template: Template, shape: string): Promise<boolean> {
  try {
    if ((await shapeOf(client, schema)) !== shape) return false;
    await client.query(`begin; ${refillSql(template, schema)} commit;`);
    return true;
  } catch {
    await client.query('rollback').catch(() => {});
    return false;
  }
}
