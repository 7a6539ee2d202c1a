/**
 * The test helper that uses PostgreSQL test schemas again (test/helpers/schema-pool.ts): a
 * schema it keeps is, to the next suite, what a fresh clone of the template is; one whose
 * shape a test changed is dropped.
 */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import pg from 'pg';
import { Warren } from '../../src/syscalls/warren.ts';
import { SchemaPool } from '../helpers/schema-pool.ts';
import { PG_URL, testSchemaName } from '../helpers/stores.ts';
import { call, idleScript } from '../helpers/warrens.ts';

/** Every table's row count and every sequence's next value: what a test could tell apart. */
async function contents(client: pg.Client, schema: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const tables = await client.query<{ t: string }>(
    `select tablename as t from pg_tables where schemaname = $1 order by 1`,
    [schema],
  );
  for (const { t } of tables.rows) {
    const r = await client.query<{ n: string }>(`select count(*)::text as n from "${schema}"."${t}"`);
    out[t] = r.rows[0]!.n;
  }
  const head = await client.query(`select * from "${schema}".log_head`);
  out.log_head_rows = JSON.stringify(head.rows);
  const seqs = await client.query<{ s: string }>(
    `select sequencename as s from pg_sequences where schemaname = $1 order by 1`,
    [schema],
  );
  for (const { s } of seqs.rows) {
    const r = await client.query<{ v: string }>(
      `select last_value::text || is_called::text as v from "${schema}"."${s}"`,
    );
    out[`seq ${s}`] = r.rows[0]!.v;
  }
  return out;
}

it('a kept schema reads as a fresh clone; one a test changed the shape of is dropped', async (t) => {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    if (process.env.CI) throw error;
    t.skip(`PostgreSQL unreachable: ${(error as Error).message}`);
    return;
  }
  const pool = new SchemaPool(PG_URL);
  const [used, changed, fresh] = [testSchemaName(), testSchemaName(), testSchemaName()];
  after(async () => {
    await pool.drain();
    for (const s of [used, changed, fresh]) await client.query(`drop schema if exists "${s}" cascade`);
    await client.end();
  });
  for (const s of [used, changed, fresh]) assert.ok(await pool.clone(s), `cloned ${s}`);
  const pristine = await contents(client, fresh);

  // A warren that ran on it (sessions, events, fds), and a sequence moved.
  const w = await Warren.open({ db: PG_URL, schema: used, kernel: { containment: 'none' } });
  try {
    const s = await call(w, 'ipc_spawn', { script: idleScript });
    await call(w, 'kill', { id: s.session.id });
  } finally {
    await w.close();
  }
  await client.query(`select nextval('"${used}".knowledge_findings_n_seq')`);
  assert.notDeepEqual(await contents(client, used), pristine, 'the warren wrote to it');
  // A test's own trigger (as the cluster tests' write log adds) changes its shape.
  await client.query(
    `create function "${changed}".noop() returns trigger language plpgsql as $$ begin return new; end $$`,
  );
  await client.query(
    `create trigger noop before insert on "${changed}".events for each row execute function "${changed}".noop()`,
  );

  await pool.release([used, changed], new Set([used, changed]), () => Date.now());
  const exists = async (s: string) =>
    (await client.query('select 1 from pg_namespace where nspname = $1', [s])).rowCount === 1;
  assert.equal(await exists(changed), false, 'the changed one is dropped');
  assert.equal(pool.take(), used, 'the used one is kept');
  assert.equal(pool.take(), undefined);
  assert.deepEqual(await contents(client, used), pristine, 'and reads as a fresh clone');

  // Too old, or not made from the template: dropped.
  await pool.release([used], new Set([used]), () => Date.now() - 2 * 60 * 60 * 1000);
  assert.equal(await exists(used), false);
  assert.equal(pool.take(), undefined);
});
