/**
 * The last `max` messages a pump handed over (seq -> fd number), oldest forgotten first: two
 * typed arrays used as a ring, grown from a few entries as a pump hands more. Every delivery
 * records one here, so it must cost next to nothing: a Map per pump (an insert, and forgetting
 * the oldest) cost each delivery about a microsecond at 100 listeners, 30 % of a room's whole
 * fan-out. A look-up walks back from the newest: an agent reports what it took last.
 */
export class Handed {
  private seqs = new Float64Array(0);
  private fds = new Float64Array(0);
  /** The slot the next one goes to; once the ring is full, the oldest. */
  private next = 0;
  private count = 0;

  constructor(private readonly max: number) {}

  remember(seq: number, fd: number): void {
    if (this.count === this.seqs.length && this.count < this.max) this.grow();
    this.seqs[this.next] = seq;
    this.fds[this.next] = fd;
    this.next = (this.next + 1) % this.seqs.length;
    if (this.count < this.seqs.length) this.count++;
  }

  /** The fd a message was handed over on (once: it is forgotten), or undefined. */
  take(seq: number): number | undefined {
    const n = this.seqs.length;
    for (let k = 1; k <= this.count; k++) {
      const i = (this.next - k + n) % n;
      if (this.seqs[i] !== seq) continue;
      this.seqs[i] = -1;
      return this.fds[i];
    }
    return undefined;
  }

  /**
   * Called when full and below `max`: the ring has not wrapped yet (it wraps only at `max`), so
   * its entries run oldest first from slot 0, and stay so in a ring twice the size.
   */
  private grow(): void {
    const size = Math.min(this.max, Math.max(8, this.seqs.length * 2));
    const seqs = new Float64Array(size).fill(-1);
    const fds = new Float64Array(size);
    seqs.set(this.seqs);
    fds.set(this.fds);
    this.seqs = seqs;
    this.fds = fds;
    this.next = this.count;
  }
}
