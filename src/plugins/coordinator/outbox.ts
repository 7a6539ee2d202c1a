import type { IdGenerator } from '../../util/ids.ts';
import type { CoordinatorTx } from './schema.ts';

/** An event bound for the outside (Redis, NATS, webhooks), written with the change it reports. */
export interface OutboxEvent {
  zone: string;
  topic: string;
  /** Events of one key are delivered in the order they were written. */
  key: string;
  type: string;
  payload: Record<string, unknown>;
}

/** The unit events are enqueued in: this plugin's own (`tables.write`), with the change they report. */
export type OutboxUnit = Pick<CoordinatorTx, 'db' | 'now'>;

/**
 * Write events to the outbox inside the caller's transaction: they exist if and only if
 * the change that caused them committed. Ids are monotonic, so (created_at, id) is write order.
 */
export async function enqueue(
  tx: OutboxUnit,
  ids: IdGenerator,
  events: readonly OutboxEvent[],
): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => ({
    id: ids.id('evt'),
    zone: e.zone,
    topic: e.topic,
    key: e.key,
    type: e.type,
    payload: JSON.stringify(e.payload),
    status: 'pending' as const,
    attempts: 0,
    next_attempt_at: tx.now,
    last_error: null,
    created_at: tx.now,
    delivered_at: null,
  }));
  await tx.db.insertInto('coordinator_outbox').values(rows).execute();
  return rows.map((r) => r.id);
}
