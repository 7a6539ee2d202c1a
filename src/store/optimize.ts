import { type Kysely, sql } from 'kysely';
import type { Clock, TimerHandle } from '../util/clock.ts';
import type { DialectKind } from './dialect.ts';
import type { Database } from './schema.ts';
import type { GroupCommitWriter } from './writer.ts';

/** How often a long-lived SQLite connection refreshes its planner statistics. */
export const OPTIMIZE_EVERY_MS = 3_600_000;

const TABLES = ['events', 'sessions', 'streams', 'fds'] as const;

/**
 * Planner statistics, as SQLite recommends for long-lived connections: `PRAGMA
 * optimize=0x10002` once at open (every table, analysed only where the statistics are
 * missing or stale), then plain `PRAGMA optimize` now and then. `analysis_limit` (set on
 * the writer connection) makes each ANALYZE a sample, so neither grows with the log.
 * PostgreSQL's autovacuum keeps its own statistics; `analyze` is there for tests and benches.
 */
export class Optimizer {
  private timer: TimerHandle | undefined;
  private closed = false;

  constructor(
    private readonly kind: DialectKind,
    private readonly writer: GroupCommitWriter,
    private readonly clock: Clock,
  ) {}

  /** At open, before the writer takes units (right after migrations). */
  async atOpen(db: Kysely<Database>): Promise<void> {
    if (this.kind !== 'sqlite') return;
    await sql`pragma optimize = 0x10002`.execute(db);
    this.schedule();
  }

  /** Full statistics now (after a bulk load). */
  analyze(): Promise<void> {
    return this.writer.write(async (tx) => {
      if (tx.kind === 'sqlite') await sql`analyze`.execute(tx.db);
      else for (const t of TABLES) await sql`analyze ${sql.table(t)}`.execute(tx.db);
    });
  }

  close(): void {
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.clock.setTimeout(() => {
      void this.writer
        .write(async (tx) => {
          await sql`pragma optimize`.execute(tx.db);
        })
        .catch((error) => console.error('warren: PRAGMA optimize failed:', (error as Error).message))
        .finally(() => this.schedule());
    }, OPTIMIZE_EVERY_MS);
  }
}
