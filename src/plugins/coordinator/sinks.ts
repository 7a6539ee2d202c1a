import { createHmac } from 'node:crypto';
import type { SinkConfig } from './config.ts';
import type { CoordOutboxTable } from './schema.ts';

/** Where outbox events go. `publish` resolves once the sink has the event durably (or throws). */
export interface Sink {
  readonly name: string;
  publish(row: CoordOutboxTable, topic: string): Promise<void>;
  close(): Promise<void>;
}

/** The event as every sink carries it: the stable id consumers dedupe on, and its fields. */
export const wireEvent = (row: CoordOutboxTable) => ({
  id: row.id,
  type: row.type,
  zone_id: row.zone,
  key: row.key,
  created_at: new Date(row.created_at).toISOString(),
  payload: JSON.parse(row.payload) as unknown,
});

/** The webhook signature header: `sha256=<hex HMAC-SHA256 of the raw body>`. */
export const SIGNATURE_HEADER = 'x-warren-signature';
export const signBody = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Connections are opened on first use, so a warren without events never dials out. */
export function makeSink(cfg: SinkConfig, timeoutMs = 10_000): Sink {
  switch (cfg.type) {
    case 'redis':
      return redisSink(cfg.url);
    case 'nats':
      return natsSink(cfg.servers, cfg.stream, timeoutMs);
    case 'webhook':
      return webhookSink(cfg.url, cfg.secret, timeoutMs);
  }
}

function redisSink(url: string): Sink {
  type Client = Awaited<ReturnType<typeof import('redis').createClient>>;
  let client: Promise<Client> | undefined;
  const connect = async (): Promise<Client> => {
    const { createClient } = await import('redis');
    // No reconnect loop and no offline queue: with them an unreachable server makes connect()
    // and every command wait for ever, so a row was never counted as failed and never went
    // dead. Here a publish fails at once; the next one (after its backoff) connects afresh.
    const c = createClient({
      url,
      disableOfflineQueue: true,
      socket: { connectTimeout: 5000, reconnectStrategy: false },
    });
    // Errors surface on the publishes that fail.
    c.on('error', () => {});
    await c.connect();
    return c as unknown as Client;
  };
  const fresh = (): Promise<Client> =>
    (client = connect().catch((e) => {
      client = undefined;
      throw e;
    }));
  return {
    name: 'redis',
    async publish(row, topic) {
      const current = client ?? fresh();
      let c = await current;
      // A connection that dropped is not brought back by the client: start anew, once for
      // all the publishes that found it so.
      if (!c.isReady) c = await (client === current ? fresh() : (client ?? fresh()));
      const ev = wireEvent(row);
      await c.xAdd(topic, '*', {
        id: ev.id,
        type: ev.type,
        zone_id: ev.zone_id,
        key: ev.key,
        created_at: ev.created_at,
        payload: JSON.stringify(ev.payload),
      });
    },
    async close() {
      const c = await client?.catch(() => undefined);
      client = undefined;
      await c?.close().catch(() => {});
    },
  };
}

function natsSink(servers: string, stream: string, timeoutMs: number): Sink {
  type Conn = {
    nc: import('@nats-io/transport-node').NatsConnection;
    js: import('@nats-io/jetstream').JetStreamClient;
  };
  let conn: Promise<Conn> | undefined;
  // One check per subject, shared by the publishes that race for it (keys go out concurrently).
  const ensured = new Map<string, Promise<void>>();
  const connect = async (): Promise<Conn> => {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstream } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: servers.split(','), timeout: 5000 });
    return { nc, js: jetstream(nc, { timeout: timeoutMs }) };
  };
  // A topic's subject must belong to the stream: add it once (the stream is created if missing).
  const addSubject = async (c: Conn, subject: string) => {
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const jsm = await jetstreamManager(c.nc);
    try {
      const info = await jsm.streams.info(stream);
      if (!info.config.subjects?.includes(subject)) {
        await jsm.streams.update(stream, { subjects: [...(info.config.subjects ?? []), subject] });
      }
    } catch (e) {
      if (!/stream not found/i.test((e as Error).message)) throw e;
      await jsm.streams.add({ name: stream, subjects: [subject] });
    }
  };
  const ensure = (c: Conn, subject: string): Promise<void> => {
    let p = ensured.get(subject);
    if (!p) {
      p = addSubject(c, subject).catch((e: unknown) => {
        ensured.delete(subject);
        throw e;
      });
      ensured.set(subject, p);
    }
    return p;
  };
  return {
    name: 'nats',
    async publish(row, topic) {
      conn ??= connect().catch((e) => {
        conn = undefined;
        throw e;
      });
      const c = await conn;
      await ensure(c, topic);
      // msgID: JetStream drops a re-publish of the same event inside its duplicate window.
      await c.js.publish(topic, JSON.stringify(wireEvent(row)), { msgID: row.id });
    },
    async close() {
      const c = await conn?.catch(() => undefined);
      conn = undefined;
      await c?.nc.close().catch(() => {});
    },
  };
}

function webhookSink(url: string, secret: string, timeoutMs: number): Sink {
  return {
    name: 'webhook',
    async publish(row, topic) {
      const body = JSON.stringify({ topic, ...wireEvent(row) });
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signBody(secret, body),
          'x-warren-event-id': row.id,
        },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body?.cancel().catch(() => {});
      if (res.status < 200 || res.status >= 300) throw new Error(`webhook answered ${res.status}`);
    },
    async close() {},
  };
}
