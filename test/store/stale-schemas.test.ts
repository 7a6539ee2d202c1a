/** The test helper drops PostgreSQL schemas a killed run left behind, and only those. */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import pg from 'pg';
import { dropStaleSchemas, PG_URL, testSchemaName } from '../helpers/stores.ts';

it('test schemas born over an hour ago are dropped; younger ones and other names are kept', async (t) => {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    if (process.env.CI) throw error;
    t.skip(`PostgreSQL unreachable: ${(error as Error).message}`);
    return;
  }
  const now = Date.now();
  const stale = testSchemaName(now - 2 * 60 * 60 * 1000);
  const young = testSchemaName(now - 50 * 60 * 1000);
  const other = `keep_${Math.random().toString(36).slice(2, 10)}`;
  after(async () => {
    for (const s of [stale, young, other]) await client.query(`drop schema if exists "${s}" cascade`);
    await client.end();
  });
  for (const s of [stale, young, other]) await client.query(`create schema "${s}"`);
  // Another test file starting now may drop the stale one first; either way it is gone.
  const dropped = await dropStaleSchemas(client, now);
  assert.ok(!dropped.includes(young) && !dropped.includes(other), `dropped: ${dropped.join(', ')}`);
  const left = (await client.query<{ n: string }>('select nspname as n from pg_namespace')).rows.map(
    (r) => r.n,
  );
  assert.ok(!left.includes(stale));
  assert.ok(left.includes(young) && left.includes(other));
});
