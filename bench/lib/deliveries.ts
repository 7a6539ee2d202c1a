import type { LogEvent } from '../../src/store/events.ts';
import type { Warren } from '../../src/syscalls/warren.ts';

/**
 * Watches the log as it commits: when each message (by seq) became a listener's turn input
 * (a `session.input` event naming it in `seqs`), and how many events of each type the log
 * gained meanwhile. The commit listener is the moment the input is durable, which is where
 * "delivered" ends for an agent.
 */
export class DeliveryWatch {
  /** seq → times (performance.now()) its `session.input` events committed, one per listener turn. */
  readonly inputs = new Map<number, number[]>();
  readonly types = new Map<string, number>();
  events = 0;
  deliveries = 0;
  lastDelivery = 0;
  private readonly off: () => void;

  constructor(warren: Warren) {
    this.off = warren.store.writer.onCommit((batch) => this.onCommit(batch));
  }

  private onCommit(batch: readonly LogEvent[]): void {
    const at = performance.now();
    this.events += batch.length;
    for (const e of batch) {
      this.types.set(e.type, (this.types.get(e.type) ?? 0) + 1);
      if (e.type !== 'session.input') continue;
      const seqs = (e.payload as { seqs?: number[] }).seqs ?? [];
      for (const seq of seqs) {
        const times = this.inputs.get(seq);
        if (times) times.push(at);
        else this.inputs.set(seq, [at]);
        this.deliveries++;
        this.lastDelivery = at;
      }
    }
  }

  /** Start counting afresh (after a warm-up). */
  reset(): void {
    this.inputs.clear();
    this.types.clear();
    this.events = 0;
    this.deliveries = 0;
  }

  stop(): void {
    this.off();
  }

  /** "session.status 8.0, session.input 4.0, …" per message, the biggest first. */
  breakdown(messages: number): string {
    return [...this.types.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([type, n]) => `${type} ${(n / messages).toFixed(1)}`)
      .join(', ');
  }
}
