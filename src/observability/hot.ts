import type { Registry } from 'prom-client';

/**
 * Metrics for the commit and delivery paths, kept as plain numbers: an observation is an
 * array increment, no label hashing, no allocation. They are turned into Prometheus
 * samples only when scraped, through prom-client's registry (which takes any object with
 * `name`, `help`, `type` and `get()`), so they sit beside prom-client's own metrics.
 */

interface Value {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

class Series {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    if (i < b.length) this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

/** A histogram with at most one label; `series(value)` is bound once and observed on the hot path. */
export class HotHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    private readonly label?: string,
  ) {}

  series(labelValue = ''): Series {
    let s = this.all.get(labelValue);
    if (!s) {
      s = new Series(this.bounds);
      this.all.set(labelValue, s);
    }
    return s;
  }

  register(registry: Registry): this {
    registry.registerMetric(this as never);
    return this;
  }

  reset(): void {
    this.all.clear();
  }

  async get() {
    const values: Value[] = [];
    for (const [lv, s] of this.all) {
      const base = this.label ? { [this.label]: lv } : {};
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...base, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...base, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: base, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: base, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/**
 * A counter with labels, a cell per combination of their values (found by one string key:
 * the value itself when there is one label). The hot path increments a plain number.
 */
export class HotCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly cells = new Map<string, { n: number; values: readonly string[] }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labels: readonly string[],
  ) {}

  /** The cell for these label values (in the order of the label names): increment its `n`. */
  cell(...values: string[]): { n: number } {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let c = this.cells.get(key);
    if (!c) {
      c = { n: 0, values };
      this.cells.set(key, c);
    }
    return c;
  }

  register(registry: Registry): this {
    registry.registerMetric(this as never);
    return this;
  }

  reset(): void {
    this.cells.clear();
  }

  async get() {
    const values: Value[] = [...this.cells.values()].map((c) => ({
      labels: Object.fromEntries(this.labels.map((l, i) => [l, c.values[i]!])),
      value: c.n,
    }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
