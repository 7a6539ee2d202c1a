import type { LogEvent } from '../../store/events.ts';

// The hub has no part of the MCP SDK: it is made with the server (src/surfaces/mcp/catalog.ts),
// while the SDK, whose schemas take a while to build, loads with the first MCP connection.

export interface Watcher {
  /** The keys a commit batch touched, once per batch, for the watcher's keys only. */
  touched(keys: ReadonlySet<string>): void;
}

interface CommitSource {
  onCommit(listener: (events: readonly LogEvent[]) => void): () => void;
  /** The keys an event changes (the plugins' resource providers say: Contributions.touches). */
  touches(event: LogEvent): readonly string[];
}

/**
 * The commit fan-out of one warren's MCP surface. It listens to the store writer's commits
 * only while someone subscribes (so an idle surface costs the writer nothing), indexes
 * watchers by key, and hands each watcher the keys a batch touched once per batch: the
 * cost of a commit is its events plus the watchers they touch, not the number of watchers.
 */
export class SubscriptionHub {
  private readonly byKey = new Map<string, Set<Watcher>>();
  private unlisten: (() => void) | undefined;

  constructor(private readonly source: CommitSource) {}

  /** Keys watched by anyone (0 once every watcher is gone). */
  get size(): number {
    return this.byKey.size;
  }

  /** Whether the hub holds a commit listener (only while something is watched). */
  get listening(): boolean {
    return this.unlisten !== undefined;
  }

  watch(key: string, w: Watcher): void {
    const set = this.byKey.get(key) ?? new Set<Watcher>();
    this.byKey.set(key, set);
    set.add(w);
    this.unlisten ??= this.source.onCommit((events) => this.onCommit(events));
  }

  unwatch(key: string, w: Watcher): void {
    const set = this.byKey.get(key);
    if (!set) return;
    set.delete(w);
    if (set.size === 0) this.byKey.delete(key);
    if (this.byKey.size === 0) {
      this.unlisten?.();
      this.unlisten = undefined;
    }
  }

  private onCommit(events: readonly LogEvent[]): void {
    const touched = new Map<Watcher, Set<string>>();
    for (const e of events) {
      for (const key of this.source.touches(e)) {
        const set = this.byKey.get(key);
        if (!set) continue;
        for (const w of set) {
          const keys = touched.get(w) ?? new Set<string>();
          touched.set(w, keys);
          keys.add(key);
        }
      }
    }
    for (const [w, keys] of touched) w.touched(keys);
  }
}
