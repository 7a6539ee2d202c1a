/**
 * The real sinks as a consumer sees them, for tests: a Redis stream read back, a NATS
 * JetStream stream read back, and a webhook receiver on 127.0.0.1:0 that checks signatures.
 * Every name is unique per test and removed after it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signBody } from '../../src/plugins/coordinator/sinks.ts';

// biome-ignore lint/suspicious/noExplicitAny: wire events are checked by the tests that read them
type Any = any;

export const REDIS_URL = process.env.WARREN_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const NATS_URL = process.env.WARREN_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

export const unique = (what: string) =>
  `${what}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** Every entry of a Redis stream, oldest first. */
export async function redisEntries(stream: string): Promise<Any[]> {
  const { createClient } = await import('redis');
  const c = createClient({ url: REDIS_URL });
  c.on('error', () => {});
  await c.connect();
  try {
    const entries = await c.xRange(stream, '-', '+');
    return (entries ?? []).map((e) => ({ ...e.message, payload: JSON.parse(String(e.message.payload)) }));
  } finally {
    await c.close();
  }
}

export async function redisDelete(...keys: string[]): Promise<void> {
  const { createClient } = await import('redis');
  const c = createClient({ url: REDIS_URL });
  c.on('error', () => {});
  await c.connect();
  try {
    if (keys.length > 0) await c.del(keys);
  } finally {
    await c.close();
  }
}

/** Every message of a JetStream stream (parsed), oldest first; [] when the stream does not exist. */
export async function natsMessages(stream: string): Promise<Any[]> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: NATS_URL, timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc);
    let last: number;
    try {
      last = (await jsm.streams.info(stream)).state.last_seq;
    } catch {
      return [];
    }
    const out: Any[] = [];
    for (let seq = 1; seq <= last; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (m) out.push({ subject: m.subject, ...m.json<Any>() });
    }
    return out;
  } finally {
    await nc.close();
  }
}

export async function natsDelete(stream: string): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: NATS_URL, timeout: 5000 });
  try {
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => {});
  } finally {
    await nc.close();
  }
}

export interface Receiver {
  url: string;
  /** Bodies received with a valid signature, in arrival order. */
  received: Any[];
  /** Requests refused for a bad signature. */
  badSignatures: number;
  /** Decide each answer: a status, or 'hang' to never answer. */
  answer: (body: Any, n: number) => number | 'hang';
  close(): Promise<void>;
}

/** A webhook endpoint on 127.0.0.1:0 checking the HMAC header with `secret`. */
export async function webhookReceiver(secret: string): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const r: Receiver = {
    url: '',
    received: [],
    badSignatures: 0,
    answer: () => 200,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  let n = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      if (req.headers['x-warren-signature'] !== signBody(secret, body)) {
        r.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      const parsed = JSON.parse(body);
      const a = r.answer(parsed, n++);
      if (a === 'hang') {
        hanging.add(res);
        return;
      }
      if (a >= 200 && a < 300) r.received.push(parsed);
      res.writeHead(a).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}
