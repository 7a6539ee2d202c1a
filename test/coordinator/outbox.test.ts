import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { enqueue } from '../../src/plugins/coordinator/outbox.ts';
import { forEachWarren, until } from '../helpers/warrens.ts';
import { coordinatorWarren, outbox, rows, spawnBody } from './helpers.ts';
import {
  NATS_URL,
  natsDelete,
  natsMessages,
  REDIS_URL,
  redisDelete,
  redisEntries,
  unique,
  webhookReceiver,
} from './sinks.ts';

const SECRET = 'a-webhook-secret-of-some-length';

forEachWarren('coordinator outbox', (target) => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanups.splice(0)) await c().catch(() => {});
  });

  describe('the publisher', () => {
    it('delivers each event once to Redis, NATS JetStream and a signed webhook, with its stable id', async () => {
      const prefix = `${unique('t')}.`;
      const stream = unique('WT');
      const hook = await webhookReceiver(SECRET);
      cleanups.push(
        () => hook.close(),
        () => redisDelete(`${prefix}caracal.sessions.revoke`),
        () => natsDelete(stream),
      );
      const h = await coordinatorWarren(target, {
        outbox: {
          intervalMs: 50,
          topicPrefix: prefix,
          sinks: [
            { type: 'redis', url: REDIS_URL },
            { type: 'nats', servers: NATS_URL, stream },
            { type: 'webhook', url: hook.url, secret: SECRET },
          ],
        },
      });
      const root = (await h.api('POST', '/zones/default/agents', spawnBody())).json.agent;
      const child = (await h.api('POST', '/zones/default/agents', spawnBody({ parent_id: root.id }))).json
        .agent;
      await h.api('DELETE', `/zones/default/agents/${root.id}`);
      await until(
        async () => (await rows(h, 'coordinator_outbox')).every((r) => r.status === 'delivered'),
        10_000,
        'the outbox to drain',
      );
      const ids = (await rows(h, 'coordinator_outbox')).map((r) => r.id).sort();
      const redis = await redisEntries(`${prefix}caracal.sessions.revoke`);
      assert.deepEqual(redis.map((e) => e.id).sort(), ids);
      assert.deepEqual(redis.map((e) => e.payload.session_id).sort(), [root.id, child.id].sort());
      const nats = await natsMessages(stream);
      assert.deepEqual(nats.map((m) => m.id).sort(), ids);
      assert.ok(nats.every((m) => m.subject === `${prefix}caracal.sessions.revoke`));
      assert.deepEqual(hook.received.map((b) => b.id).sort(), ids);
      assert.equal(hook.badSignatures, 0);
    });

    it('publishes different keys side by side and each key in write order (Redis and NATS)', async () => {
      const prefix = `${unique('t')}.`;
      const stream = unique('WT');
      cleanups.push(
        () => redisDelete(`${prefix}t`),
        () => natsDelete(stream),
      );
      const h = await coordinatorWarren(target, {
        outbox: {
          intervalMs: 3_600_000,
          batchSize: 500,
          topicPrefix: prefix,
          sinks: [
            { type: 'redis', url: REDIS_URL },
            { type: 'nats', servers: NATS_URL, stream },
          ],
        },
      });
      // 20 keys × 10 events, interleaved in one transaction: one pass, 20 chains at once.
      await outbox(h.warren).write((tx) =>
        enqueue(
          tx,
          h.warren.kernel.ids,
          Array.from({ length: 200 }, (_, i) => ({
            zone: 'default',
            topic: 't',
            key: `k${i % 20}`,
            type: 'test',
            payload: { n: Math.floor(i / 20) },
          })),
        ),
      );
      const c = h.warren.plugins.get<{ publisher: { pass(): Promise<{ delivered: number }> } }>(
        'coordinator',
      );
      assert.equal((await c.publisher.pass()).delivered, 200, 'one pass takes the whole batch');
      const order = (events: Array<{ key: string; payload: { n: number } }>) => {
        const byKey = new Map<string, number[]>();
        for (const e of events) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e.payload.n]);
        return byKey;
      };
      const inOrder = Array.from({ length: 10 }, (_, n) => n);
      for (const [sink, events] of [
        ['redis', await redisEntries(`${prefix}t`)],
        ['nats', await natsMessages(stream)],
      ] as const) {
        const byKey = order(events as Array<{ key: string; payload: { n: number } }>);
        assert.equal(byKey.size, 20, sink);
        for (const [key, ns] of byKey) assert.deepEqual(ns, inOrder, `${sink} ${key}`);
      }
    });

    it('keeps order per key, backs off, and marks an event dead after its attempts (logged)', async () => {
      const hook = await webhookReceiver(SECRET);
      cleanups.push(() => hook.close());
      const errors: string[] = [];
      const log = {
        error: (_o: Record<string, unknown>, m: string) => errors.push(m),
        warn: () => {},
        info: () => {},
        debug: () => {},
      };
      const h = await coordinatorWarren(
        target,
        {
          outbox: {
            intervalMs: 30,
            backoffMs: 20,
            maxBackoffMs: 40,
            maxAttempts: 3,
            sinks: [{ type: 'webhook', url: hook.url, secret: SECRET }],
          },
        },
        { log },
      );
      // Every attempt at event 1 of key k1 fails; its event 2 waits for it; key k2 goes through.
      hook.answer = (b) => (b.payload.n === 1 ? 500 : 200);
      const write = (key: string, n: number) =>
        outbox(h.warren).write((tx) =>
          enqueue(tx, h.warren.kernel.ids, [
            { zone: 'default', topic: 't', key, type: 'test', payload: { n } },
          ]),
        );
      const [e1] = await write('k1', 1);
      await write('k1', 2);
      await write('k2', 3);
      await until(async () => hook.received.some((x) => x.key === 'k2'), 20_000, 'the other key');
      assert.ok(!hook.received.some((x) => x.key === 'k1'), 'k1 event 2 must wait for event 1');
      const dead = await until(
        async () => (await rows(h, 'coordinator_outbox')).find((r) => r.status === 'dead'),
        10_000,
        'the poisoned event to die',
      );
      assert.equal(dead.id, e1);
      assert.equal(dead.attempts, 3);
      assert.match(dead.last_error, /500/);
      assert.ok(errors.some((m) => m.includes(dead.id) && /dead/.test(m)));
      await until(
        async () => hook.received.some((x) => x.key === 'k1'),
        5000,
        'k1 event 2 after event 1 died',
      );
    });

    it('an unreachable Redis fails each attempt, so the event goes dead after its attempts', async () => {
      const h = await coordinatorWarren(target, {
        outbox: {
          intervalMs: 30,
          backoffMs: 20,
          maxBackoffMs: 40,
          maxAttempts: 2,
          // Nothing listens on port 1.
          sinks: [{ type: 'redis', url: 'redis://127.0.0.1:1' }],
        },
      });
      const [e1] = await outbox(h.warren).write((tx) =>
        enqueue(tx, h.warren.kernel.ids, [
          { zone: 'default', topic: 't', key: 'k', type: 'test', payload: {} },
        ]),
      );
      const dead = await until(
        async () => (await rows(h, 'coordinator_outbox')).find((r) => r.id === e1 && r.status === 'dead'),
        20_000,
        'the event to die',
      );
      assert.equal(dead.attempts, 2);
      assert.match(dead.last_error, /ECONNREFUSED|connect/i);
    });
  });
});
