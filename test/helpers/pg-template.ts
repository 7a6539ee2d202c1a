/**
 * Fresh PostgreSQL schemas for tests, cloned from a migrated template instead of migrated one
 * at a time. A warren opened on a fresh schema runs every migration set (core's and each
 * plugin's) through Kysely's migrator, dozens of statements and commits, and the suite opens
 * hundreds: that was most of the PostgreSQL half's time. The real migrations still build the
 * template, once per migration set (the name of the cached text is a hash of every migration's
 * name and code); pg_dump turns it into one SQL text, cached under node_modules/.cache, and a
 * new schema replays that text in one round trip. A warren opened on it finds its migrations
 * done (its history tables came along) and skips them. Without pg_dump, or if any of this
 * fails, schemas are left to the migrations as before: slower, never wrong.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Migration } from 'kysely';
import pg from 'pg';
import { migrations } from '../../src/store/migrations/index.ts';
import { Store } from '../../src/store/store.ts';
import { builtinPlugins } from '../../src/syscalls/plugins.ts';
import { systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';

const CACHE_DIR = join(import.meta.dirname, '../../node_modules/.cache/warren-tests');
/** The template's schema name (in the cached text too, replaced by each clone's): one per fingerprint. */
const templateName = (fp: string) => `warren_template_${fp}`;

/** Every migration the template runs, in order: core's, then each built-in plugin's. */
async function migrationSets(): Promise<Array<{ plugin: string | null; steps: Record<string, Migration> }>> {
  const sets: Array<{ plugin: string | null; steps: Record<string, Migration> }> = [
    { plugin: null, steps: await migrations('postgres').getMigrations() },
  ];
  for (const p of builtinPlugins())
    if (p.migrations) sets.push({ plugin: p.name, steps: p.migrations('postgres') });
  return sets;
}

function fingerprint(sets: Awaited<ReturnType<typeof migrationSets>>): string {
  const h = createHash('sha256');
  for (const set of sets) {
    h.update(`${set.plugin ?? 'core'}\n`);
    for (const [name, m] of Object.entries(set.steps)) h.update(`${name}\n${m.up.toString()}\n`);
  }
  return h.digest('hex').slice(0, 16);
}

interface Template {
  sql: string;
  /** The schema name in `sql`. */
  name: string;
}

/** The template's SQL for this code's migrations: from the cache, else built and cached. */
async function template(url: string): Promise<Template> {
  const sets = await migrationSets();
  const fp = fingerprint(sets);
  const PLACEHOLDER = templateName(fp);
  const file = join(CACHE_DIR, `pg-${fp}.sql`);
  if (existsSync(file)) return { sql: readFileSync(file, 'utf8'), name: PLACEHOLDER };
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    // One builder across the run's test processes; the others wait, then read its file.
    await client.query('select pg_advisory_lock(hashtext($1))', [PLACEHOLDER]);
    if (existsSync(file)) return { sql: readFileSync(file, 'utf8'), name: PLACEHOLDER };
    await client.query(`drop schema if exists "${PLACEHOLDER}" cascade`);
    const store = await Store.open(
      { url, durability: 'process', schema: PLACEHOLDER, poolSize: 1 },
      systemClock,
      createIds(systemClock),
    );
    try {
      for (const set of sets) if (set.plugin) await store.migratePlugin(set.plugin, set.steps);
    } finally {
      await store.close();
    }
    const { stdout } = await promisify(execFile)(
      'pg_dump',
      ['--no-owner', '--no-privileges', '--inserts', '--schema', PLACEHOLDER, `--dbname=${url}`],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    await client.query(`drop schema if exists "${PLACEHOLDER}" cascade`);
    // psql's meta-commands (\restrict …) are not SQL; the search_path reset would leave the
    // replaying connection's own path empty, which is harmless but pointless.
    const text = stdout
      .split('\n')
      .filter(
        (line) => !line.startsWith('\\') && !line.startsWith("SELECT pg_catalog.set_config('search_path'"),
      )
      .join('\n');
    if (!text.includes(`CREATE SCHEMA ${PLACEHOLDER};`)) throw new Error('pg_dump gave no schema');
    mkdirSync(CACHE_DIR, { recursive: true });
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
    return { sql: text, name: PLACEHOLDER };
  } finally {
    await client.query('select pg_advisory_unlock_all()').catch(() => {});
    await client.end().catch(() => {});
  }
}

/**
 * Clone the template into `schema` (which must not exist yet). False when it could not: the
 * caller's open then migrates the schema itself.
 */
export async function cloneTemplate(
  url: string,
  schema: string,
  memo: { template?: Promise<Template | null> },
): Promise<boolean> {
  memo.template ??= template(url).catch((error) => {
    process.stderr.write(
      `\nnote: PostgreSQL test schemas are migrated one by one (${(error as Error).message})\n`,
    );
    return null;
  });
  const t = await memo.template;
  if (t === null) return false;
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(t.sql.replaceAll(t.name, schema));
    return true;
  } catch {
    await client.query(`drop schema if exists "${schema}" cascade`).catch(() => {});
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
