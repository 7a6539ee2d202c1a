/**
 * Real server processes: two on one PostgreSQL (spawn limits and Idempotency-Key hold
 * across them), and a server SIGKILLed in the middle of publishing (nothing lost; a
 * re-sent event carries its first id).
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { forEachWarren, until } from '../helpers/warrens.ts';
import { REDIS_URL, redisDelete, redisEntries, unique, webhookReceiver } from './sinks.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the tests that read them
type Any = any;

const SECRET = 'a-webhook-secret-of-some-length';

async function post(s: ServerProcess, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(s.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, json: (await res.json()) as Any };
}

forEachWarren('coordinator across server processes', (target) => {
  const servers: ServerProcess[] = [];
  const dirs: string[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    await Promise.allSettled(servers.map((s) => s.crash()));
    for (const c of cleanups.splice(0)) await c().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'warren-coord-'));
    dirs.push(d);
    return d;
  };
  const dbOf = () => {
    const loc = target.location();
    return { loc, db: loc.schema ? `${loc.url}?schema=${loc.schema}` : loc.url };
  };
  const settings = (s: unknown) => ({ WARREN_PLUGIN_SETTINGS: JSON.stringify({ coordinator: s }) });

  if (target.kind === 'postgres') {
    describe('two servers on one PostgreSQL', () => {
      it('one creation per Idempotency-Key and exactly the zone limit, callers split over both', {
        timeout: 90_000,
      }, async () => {
        const { db } = dbOf();
        const env = settings({
          limits: { maxDepth: 10, maxChildren: 10, maxPerZone: 6, maxPerApplication: 200 },
        });
        const d1 = dir();
        const a = await startServer({ dataDir: d1, db, env });
        servers.push(a);
        const d2 = dir();
        copyFileSync(join(d1, 'operator.key'), join(d2, 'operator.key'));
        const b = await startServer({ dataDir: d2, db, env });
        servers.push(b);
        const same = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            post(
              i % 2 ? a : b,
              '/zones/default/agents',
              { application_id: 'app' },
              { 'idempotency-key': 'k1' },
            ),
          ),
        );
        assert.ok(
          same.every((r) => r.status === 200),
          JSON.stringify(same.map((r) => r.json)),
        );
        assert.equal(new Set(same.map((r) => r.json.agent.id)).size, 1);
        assert.equal(same.filter((r) => r.json.created).length, 1);
        const many = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            post(i % 2 ? a : b, '/zones/default/agents', { application_id: `a${i}` }),
          ),
        );
        assert.equal(many.filter((r) => r.status === 200).length, 5);
        assert.ok(
          many.filter((r) => r.status !== 200).every((r) => r.json.error.details.limit === 'maxPerZone'),
        );
      });
    });
  }

  describe('a server killed mid-publish', () => {
    it('loses nothing; the re-sent event carries the same id', { timeout: 90_000 }, async () => {
      const { loc, db } = dbOf();
      const prefix = `${unique('t')}.`;
      const hook = await webhookReceiver(SECRET);
      cleanups.push(
        () => hook.close(),
        () => redisDelete(`${prefix}caracal.sessions.revoke`),
      );
      // Redis takes each event first; the webhook hangs on the third, and the server dies there.
      let stuck: Any = null;
      hook.answer = (b, n) => {
        if (n === 2) {
          stuck = b;
          return 'hang';
        }
        return 200;
      };
      const env = settings({
        outbox: {
          intervalMs: 50,
          topicPrefix: prefix,
          sinks: [
            { type: 'redis', url: REDIS_URL },
            { type: 'webhook', url: hook.url, secret: SECRET },
          ],
        },
      });
      const d = dir();
      const s1 = await startServer({ dataDir: d, db, env });
      servers.push(s1);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await post(s1, '/zones/default/agents', { application_id: 'app' })).json.agent.id);
      for (const id of ids) {
        const res = await fetch(`${s1.url}/zones/default/agents/${id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${s1.key}` },
        });
        assert.equal(res.status, 200);
      }
      await until(() => stuck, 20_000, 'the publisher to reach the third event');
      await s1.crash();
      hook.answer = () => 200;
      const s2 = await startServer({ dataDir: d, db, env });
      servers.push(s2);
      const outbox = async (): Promise<Any[]> => {
        if (loc.schema) {
          const c = new pg.Client({ connectionString: loc.url });
          await c.connect();
          try {
            return (await c.query(`select id, status from "${loc.schema}".coordinator_outbox`)).rows;
          } finally {
            await c.end();
          }
        }
        const sq = new Database(loc.url, { readonly: true, fileMustExist: true });
        try {
          return sq.prepare('select id, status from coordinator_outbox').all() as Any[];
        } finally {
          sq.close();
        }
      };
      await until(
        async () => (await outbox()).every((r) => r.status === 'delivered'),
        20_000,
        'the outbox to drain',
      );
      const all = (await outbox()).map((r) => r.id).sort();
      assert.equal(all.length, 5);
      const redis = await redisEntries(`${prefix}caracal.sessions.revoke`);
      // Nothing lost: every event reached both sinks; the one in flight at the kill twice, same id.
      assert.deepEqual([...new Set(redis.map((e) => e.id))].sort(), all);
      assert.deepEqual([...new Set(hook.received.map((e) => e.id))].sort(), all);
      assert.ok(redis.length > all.length, 'the event in flight was re-sent');
      assert.equal(redis.filter((e) => e.id === stuck.id).length, 2);
      await s2.stop();
    });
  });
});
