/** The test helper drops PostgreSQL schemas a killed run left behind, and only those. */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { dropStaleSchemas, pgClientOrSkip, testSchemaName } from '../helpers/stores.ts';

it('test schemas born over an hour ago are dropped; younger ones and other names are kept', async (t) => {
  const client = await pgClientOrSkip(t);
  if (!client) return;
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
