import type { Clock } from '../../util/clock.ts';
import type { Log } from '../../util/log.ts';
import type { CoordinatorConfig } from './config.ts';
import type { CoordinatorTables, CoordOutboxTable } from './schema.ts';
import type { Sink } from './sinks.ts';

/** What one publisher pass did (tests and the bench read it). */
export interface PublishPass {
  delivered: number;
  failed: number;
  dead: number;
}

/**
 * Deliver ready outbox rows to every sink, in order per key: a key whose oldest pending
 * event is waiting out its backoff (or just failed) holds back its later events. Different
 * keys are published concurrently. A row is
 * marked delivered only after every sink took it, so a crash in between re-sends it with
 * the same id (at-least-once). Failures back off exponentially; past maxAttempts the row
 * is `dead` (logged, and listed by `warren outbox list --status dead`).
 */
export class Publisher {
  constructor(
    private readonly tables: CoordinatorTables,
    private readonly clock: Clock,
    private readonly log: Log,
    private readonly cfg: CoordinatorConfig['outbox'],
    private readonly sinks: readonly Sink[],
  ) {}

  async pass(): Promise<PublishPass> {
    const out: PublishPass = { delivered: 0, failed: 0, dead: 0 };
    const now = this.clock.now();
    const rows = await this.tables.reader
      .selectFrom('coordinator_outbox')
      .selectAll()
      .where('status', '=', 'pending')
      .orderBy('created_at')
      .orderBy('id')
      .limit(this.cfg.batchSize * 4)
      .execute();
    // The batch as one chain per key, in write order: chains go out side by side (the
    // sinks' clients pipeline them: JetStream acks and XADD replies overlap), the events of
    // one key one after another, and a key stops at its first failure.
    const held = new Set<string>();
    const chains = new Map<string, CoordOutboxTable[]>();
    let taken = 0;
    for (const row of rows) {
      if (held.has(row.key)) continue;
      if (row.next_attempt_at > now || taken >= this.cfg.batchSize) {
        held.add(row.key);
        continue;
      }
      taken++;
      const chain = chains.get(row.key);
      if (chain) chain.push(row);
      else chains.set(row.key, [row]);
    }
    const delivered: string[] = [];
    const failures: Array<{ row: CoordOutboxTable; error: string }> = [];
    await Promise.all(
      [...chains.values()].map(async (chain) => {
        for (const row of chain) {
          try {
            for (const sink of this.sinks) await sink.publish(row, this.cfg.topicPrefix + row.topic);
            delivered.push(row.id);
          } catch (error) {
            failures.push({ row, error: (error as Error)?.message?.slice(0, 500) ?? String(error) });
            return;
          }
        }
      }),
    );
    if (delivered.length === 0 && failures.length === 0) return out;
    await this.tables.write(async (tx) => {
      const db = tx.db;
      for (let i = 0; i < delivered.length; i += 500) {
        await db
          .updateTable('coordinator_outbox')
          .set({ status: 'delivered', delivered_at: tx.now })
          .where('id', 'in', delivered.slice(i, i + 500))
          .where('status', '=', 'pending')
          .execute();
      }
      for (const { row, error } of failures) {
        const attempts = row.attempts + 1;
        const dead = attempts >= this.cfg.maxAttempts;
        const delay = Math.min(this.cfg.backoffMs * 2 ** (attempts - 1), this.cfg.maxBackoffMs);
        await db
          .updateTable('coordinator_outbox')
          .set({
            attempts,
            last_error: error,
            status: dead ? 'dead' : 'pending',
            next_attempt_at: tx.now + delay,
          })
          .where('id', '=', row.id)
          .where('status', '=', 'pending')
          .execute();
        if (dead) {
          out.dead++;
          this.log.error(
            { event: row.id, topic: row.topic, key: row.key, attempts, err: error },
            `outbox event ${row.id} is dead after ${attempts} attempts`,
          );
        } else out.failed++;
      }
    });
    out.delivered = delivered.length;
    return out;
  }
}
