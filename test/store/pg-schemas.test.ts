/**
 * The test helper's PostgreSQL schemas made ahead (test/helpers/pg-schemas.ts): each asked-for
 * schema is fresh and migrated, under the name asked for, never one a test used; what a
 * process still holds when it is done is dropped before it exits.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, it } from 'node:test';
import type pg from 'pg';
import { SchemaPool } from '../helpers/pg-schemas.ts';
import { PG_URL, pgClientOrSkip, testSchemaName } from '../helpers/stores.ts';
import { until, WAIT_MS } from '../helpers/warrens.ts';

const schemasLike = async (client: pg.Client, prefix: string) =>
  (
    await client.query<{ n: string }>(
      'select nspname as n from pg_namespace where nspname like $1 order by 1',
      [`${prefix}%`],
    )
  ).rows.map((r) => r.n);

it('each schema asked for is fresh and migrated, under its own name', async (t) => {
  const client = await pgClientOrSkip(t);
  if (!client) return;
  const tag = `t_${Date.now().toString(36)}_p${Math.random().toString(36).slice(2, 8)}`;
  let n = 0;
  const pool = new SchemaPool(PG_URL, () => `${tag}${n++}`);
  const asked = [testSchemaName(), testSchemaName(), testSchemaName()];
  after(async () => {
    for (const s of [...asked, ...(await schemasLike(client, tag))])
      await client.query(`drop schema if exists "${s}" cascade`);
    await client.end();
  });
  for (const schema of asked) {
    assert.equal(await pool.make(schema), true);
    const head: pg.QueryResult<{ seq: string }> = await client.query<{ seq: string }>(
      `select seq from "${schema}".log_head`,
    );
    assert.deepEqual(head.rows, [{ seq: '0' }], 'migrated, with the template rows only');
    // Written to, as a test would: the next schema must not see it.
    await client.query(`update "${schema}".log_head set seq = 7`);
    await client.query(`insert into "${schema}".zones (id, created_at) values ('z', 0)`);
  }
  for (const schema of asked) {
    const zones: pg.QueryResult = await client.query(`select id from "${schema}".zones where id = 'z'`);
    assert.equal(zones.rowCount, 1, `${schema} kept its own row`);
  }
  // Clones waiting for the next test, under the pool's own names.
  await until(async () => (await schemasLike(client, tag)).length > 0, WAIT_MS, 'clones made ahead');
  pool.drop(asked);
});

it('a process drops the clones nobody took, and finishes its drops, before it exits', async (t) => {
  const client = await pgClientOrSkip(t);
  if (!client) return;
  const tag = `t_${Date.now().toString(36)}_x${Math.random().toString(36).slice(2, 8)}`;
  after(async () => {
    for (const s of await schemasLike(client, tag))
      await client.query(`drop schema if exists "${s}" cascade`);
    await client.end();
  });
  // A process that makes one schema, drops it, and ends without waiting for anything.
  const script = `
    import { SchemaPool } from ${JSON.stringify(new URL('../helpers/pg-schemas.ts', import.meta.url).href)};
    let n = 0;
    const pool = new SchemaPool(${JSON.stringify(PG_URL)}, () => ${JSON.stringify(tag)} + 'ahead' + n++);
    const mine = ${JSON.stringify(`${tag}mine`)};
    if (!(await pool.make(mine))) process.exit(3);
    pool.drop([mine]);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
  assert.deepEqual(await schemasLike(client, tag), [], 'nothing of the process is left');
});
