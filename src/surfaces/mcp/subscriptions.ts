import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../kernel/principal.ts';
import type { LogEvent } from '../../store/events.ts';
import type { Warren } from '../../warren.ts';
import { asMcpError, assertMayRead } from './resources.ts';
import { parseUri } from './uris.ts';

/** Subscriptions one MCP connection may hold at once. */
export const MAX_SUBSCRIPTIONS = 1000;

/**
 * What changes a resource, as a key an event carries: `session:<id>` (any event about the
 * session: its record and its log), `stream:<id>` (a message on it, or its closing: its
 * transcript), `zone:<zone>` (any event: an operator's log).
 */
function keysOf(e: LogEvent): string[] {
  const keys = [`zone:${e.zone}`];
  if (e.session_id) keys.push(`session:${e.session_id}`);
  if (e.stream_id && (e.type === 'stream.message' || e.type === 'stream.closed'))
    keys.push(`stream:${e.stream_id}`);
  return keys;
}

interface Watcher {
  /** The keys a commit batch touched, once per batch, for the watcher's keys only. */
  touched(keys: ReadonlySet<string>): void;
}

interface CommitSource {
  onCommit(listener: (events: readonly LogEvent[]) => void): () => void;
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
      for (const key of keysOf(e)) {
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

/**
 * One MCP connection's subscriptions: URI → the key that changes it. A commit batch that
 * touches a key sends exactly one `notifications/resources/updated` per subscribed URI;
 * closing the connection drops them all.
 */
export class Subscriptions implements Watcher {
  private readonly byUri = new Map<string, string | null>();
  private readonly counts = new Map<string, number>();
  /** Set when the connection is gone: a subscribe still in flight then adds nothing. */
  private closed = false;

  constructor(
    private readonly hub: SubscriptionHub,
    private readonly notify: (uri: string) => void,
  ) {}

  get size(): number {
    return this.byUri.size;
  }

  /** `key` null: a URI that is not warren's — accepted, and it never changes. */
  add(uri: string, key: string | null): void {
    if (this.closed || this.byUri.has(uri)) return;
    if (this.byUri.size >= MAX_SUBSCRIPTIONS)
      throw new McpError(
        ErrorCode.InvalidParams,
        `too many subscriptions on this connection (cap ${MAX_SUBSCRIPTIONS}): unsubscribe first`,
        { uri, code: 'limit_exceeded' },
      );
    this.byUri.set(uri, key);
    if (key === null) return;
    const n = this.counts.get(key) ?? 0;
    this.counts.set(key, n + 1);
    if (n === 0) this.hub.watch(key, this);
  }

  remove(uri: string): void {
    if (!this.byUri.has(uri)) return;
    const key = this.byUri.get(uri) ?? null;
    this.byUri.delete(uri);
    if (key === null) return;
    const n = (this.counts.get(key) ?? 1) - 1;
    if (n > 0) return void this.counts.set(key, n);
    this.counts.delete(key);
    this.hub.unwatch(key, this);
  }

  touched(keys: ReadonlySet<string>): void {
    for (const [uri, key] of this.byUri) if (key !== null && keys.has(key)) this.notify(uri);
  }

  close(): void {
    this.closed = true;
    for (const key of this.counts.keys()) this.hub.unwatch(key, this);
    this.counts.clear();
    this.byUri.clear();
  }
}

/**
 * The key a caller's subscription to `uri` watches, after the same read check as reading it:
 * a caller cannot watch what it may not read.
 */
async function keyFor(warren: Warren, p: Principal, u: string): Promise<string | null> {
  const r = parseUri(u);
  if (!r) return null;
  assertMayRead(warren, p, r.kind, u);
  switch (r.kind) {
    case 'events':
      return p.kind === 'operator' ? `zone:${p.zone}` : `session:${p.sessionId}`;
    case 'session':
    case 'session-events':
      return `session:${(await warren.kernel.session(p, r.id)).id}`;
    case 'transcript':
      // A subscription follows the stream the name meant when it was made.
      return `stream:${(await warren.kernel.transcript(p, r.stream, { limit: 1 })).stream.id}`;
  }
}

/** `resources/subscribe` and `resources/unsubscribe` for one connection; returns its subscriptions. */
export function registerSubscriptions(
  server: Server,
  warren: Warren,
  principal: Principal,
  hub: SubscriptionHub,
): Subscriptions {
  const subs = new Subscriptions(hub, (uri) => {
    void server.sendResourceUpdated({ uri }).catch(() => {});
  });
  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    const u = req.params.uri;
    let key: string | null;
    try {
      key = await keyFor(warren, principal, u);
    } catch (error) {
      throw asMcpError(error, { uri: u });
    }
    subs.add(u, key);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    subs.remove(req.params.uri);
    return {};
  });
  return subs;
}
