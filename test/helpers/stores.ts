/**
 * Run a suite against every store backend: SQLite (a real file in a fresh temp dir) and
 * PostgreSQL (a fresh schema per store in WARREN_TEST_PG_URL).
 *
 *   forEachStore('log', (target) => {
 *     it('appends', async () => {
 *       const store = await target.open();
 *       ...
 *     });
 *   });
 *
 * Stores opened inside a test are closed after that test; stores opened in a `before`
 * hook are closed after the suite. Temp dirs and schemas are removed after the suite.
 * If PostgreSQL is unreachable its suites are skipped with one loud warning (per test
 * file: each runs in its own process), unless `CI` is set: then they fail. WARREN_TEST_PG=off
 * skips them on purpose, CI or not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import pg from 'pg';
import type { DialectKind, Durability, StoreLocation } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { type Clock, systemClock } from '../../src/util/clock.ts';
import { createIds, type IdGenerator } from '../../src/util/ids.ts';
import { SchemaPool } from './pg-schemas.ts';

export const PG_URL = process.env.WARREN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface OpenOptions {
  /** Reopen an existing location (from `target.location()` or a previous open); default: a fresh one. */
  location?: StoreLocation;
  durability?: Durability;
  clock?: Clock;
  ids?: IdGenerator;
}

export interface StoreTarget {
  readonly kind: DialectKind;
  /**
   * A fresh location (temp file / new schema), removed after the suite. A PostgreSQL schema is
   * cloned from the migrated template when first opened, unless `migrated: false`: then the
   * store's own migrations make it (what a test of concurrent first opens needs).
   */
  location(durability?: Durability, opts?: { migrated?: boolean }): StoreLocation;
  /** Open (and migrate) a store; it is closed for you. Closing it yourself is fine too. */
  open(opts?: OpenOptions): Promise<Store>;
  /**
   * Make a fresh location from `location()` ready to open: on PostgreSQL its schema is cloned
   * from the migrated template (pg-template.ts). Optional (an open migrates what is missing),
   * idempotent, and a no-op for any other location.
   */
  prepare(location: StoreLocation): Promise<void>;
}

/**
 * Whether PostgreSQL answers (undefined) or why not. Tried three times: a process loading a
 * shard of test files on a busy machine can miss one connect's deadline, and its every
 * PostgreSQL suite would then fail (under CI) for a server that is there.
 */
async function probePostgres(url: string): Promise<string | undefined> {
  const tries: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 500 * attempt));
    const t0 = Date.now();
    const why = await probeOnce(url);
    if (why === undefined) return undefined;
    tries.push(`${why} after ${Date.now() - t0} ms`);
  }
  return tries.join('; ');
}

async function probeOnce(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    await dropStaleSchemas(client).catch(() => {}); // housekeeping: never a reason to skip
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

const randomSuffix = () => Math.random().toString(36).slice(2, 10);

/**
 * A test schema's name carries its birth time: `t_<ms since epoch, base 36>_<random>`. A run
 * that was killed leaves its schemas behind, and every schema in the database slows catalog
 * reads for all; each test file's first use of PostgreSQL drops those born over an hour ago —
 * never younger ones, which a test running now (in this or another checkout) may be using.
 */
export const testSchemaName = (born = Date.now()) => `t_${born.toString(36)}_${randomSuffix()}`;
const STALE_SCHEMA_MS = 60 * 60 * 1000;

/**
 * A client of the test database, for tests of these helpers themselves: undefined, with the
 * test skipped, when PostgreSQL is unreachable (a failure under CI, as for the suites).
 */
export async function pgClientOrSkip(t: { skip(why: string): void }): Promise<pg.Client | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return client;
  } catch (error) {
    if (process.env.CI) throw error;
    t.skip(`PostgreSQL unreachable: ${(error as Error).message}`);
    return undefined;
  }
}

/** This process's schemas made ahead and dropped behind (pg-schemas.ts), one per database URL. */
const schemaPools = new Map<string, SchemaPool>();
function schemaPool(url: string): SchemaPool {
  let pool = schemaPools.get(url);
  if (!pool) {
    pool = new SchemaPool(url, () => testSchemaName());
    schemaPools.set(url, pool);
  }
  return pool;
}

export async function dropStaleSchemas(client: pg.Client, now = Date.now()): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select nspname as name from pg_namespace where nspname ~ '^t_[0-9a-z]+_[0-9a-z]+$'`,
  );
  const stale = rows
    .map((r) => r.name)
    .filter((name) => now - Number.parseInt(name.split('_')[1]!, 36) > STALE_SCHEMA_MS);
  // Another file may be dropping the same ones right now: its drop wins, ours is a no-op.
  for (const name of stale) await client.query(`drop schema if exists "${name}" cascade`).catch(() => {});
  return stale;
}

/**
 * `WARREN_TEST_PG=off` keeps the suite off PostgreSQL even when one listens on :5432 (its
 * `test` database is someone else's, say): its half is skipped with the warning, and not
 * touched at all — no probe, no housekeeping.
 */
const pgOff = process.env.WARREN_TEST_PG === 'off';
// After the definitions above: this top-level await runs them.
const pgProblem: string | undefined = pgOff
  ? 'WARREN_TEST_PG=off keeps the suite off PostgreSQL'
  : await probePostgres(PG_URL);
let warned = false;

export function forEachStore(
  name: string,
  fn: (target: StoreTarget) => void,
  opts: { backends?: DialectKind[] } = {},
): void {
  const backends = opts.backends ?? ['sqlite', 'postgres'];
  for (const kind of backends) {
    const title = `${name} [${kind}]`;
    if (kind === 'postgres' && pgProblem !== undefined) {
      const why = pgOff ? pgProblem : `PostgreSQL unreachable at ${PG_URL}: ${pgProblem}`;
      if (process.env.CI && !pgOff) {
        describe(title, () => {
          it('needs PostgreSQL (CI is set, so this is a failure, not a skip)', () => {
            throw new Error(why);
          });
        });
      } else {
        if (!warned) process.stderr.write(`\nWARNING: ${why}: PG tests SKIPPED\n\n`);
        warned = true;
        // A skipped test (not a skipped suite) so the run's summary counts it.
        describe(title, () => {
          it('needs PostgreSQL', { skip: why }, () => {});
        });
      }
      continue;
    }
    describe(title, () => {
      const target = new Target(kind);
      beforeEach(() => {
        target.inTest = true;
      });
      fn(target);
      // Registered after the suite's own hooks, so they run after them: a suite's
      // `afterEach` / `after` can still use its stores.
      afterEach(async () => {
        target.inTest = false;
        await target.closeStores(target.testStores);
      });
      after(async () => {
        await target.closeStores(target.suiteStores);
        await target.removeLocations();
      });
    });
  }
}

class Target implements StoreTarget {
  inTest = false;
  readonly testStores: Store[] = [];
  readonly suiteStores: Store[] = [];
  private readonly dirs: string[] = [];
  private readonly schemas: string[] = [];
  /** Schemas whose clone from the template is under way. */
  private readonly cloning = new Map<string, Promise<void>>();
  /** Schemas handed out by location() and not created yet. */
  private readonly unmade = new Set<string>();

  constructor(readonly kind: DialectKind) {}

  location(durability: Durability = 'process', opts: { migrated?: boolean } = {}): StoreLocation {
    if (this.kind === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'warren-test-'));
      this.dirs.push(dir);
      return { url: join(dir, 'warren.db'), durability };
    }
    const schema = testSchemaName();
    this.schemas.push(schema);
    if (opts.migrated !== false) this.unmade.add(schema);
    return { url: PG_URL, durability, schema, poolSize: 4 };
  }

  async open(opts: OpenOptions = {}): Promise<Store> {
    const location = opts.location
      ? { ...opts.location, durability: opts.durability ?? opts.location.durability }
      : this.location(opts.durability);
    await this.prepare(location);
    const clock = opts.clock ?? systemClock;
    const store = await Store.open(location, clock, opts.ids ?? createIds(clock));
    // Let both the test and the cleanup close it.
    const close = store.close.bind(store);
    let closing: Promise<void> | undefined;
    store.close = () => {
      closing ??= close();
      return closing;
    };
    (this.inTest ? this.testStores : this.suiteStores).push(store);
    return store;
  }

  async prepare(location: StoreLocation): Promise<void> {
    const schema = location.schema;
    if (schema === undefined) return;
    // Two stores opened on one fresh location at once: the second waits for the first's clone
    // (it would otherwise migrate the schema while the clone fills it).
    const inFlight = this.cloning.get(schema);
    if (inFlight) return inFlight;
    if (!this.unmade.delete(schema)) return;
    const clone = schemaPool(location.url)
      .make(schema)
      .then(() => {});
    this.cloning.set(schema, clone);
    try {
      await clone;
    } finally {
      this.cloning.delete(schema);
    }
  }

  async closeStores(stores: Store[]): Promise<void> {
    const all = stores.splice(0);
    const results = await Promise.allSettled(all.map((s) => s.close()));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async removeLocations(): Promise<void> {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    // Dropped while the next suite runs; the process waits for it before exiting.
    schemaPool(PG_URL).drop(this.schemas.splice(0));
  }
}
