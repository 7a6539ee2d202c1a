import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';
import { asMcpError } from './resources.ts';
import type { SubscriptionHub, Watcher } from './subscription-hub.ts';

/** Subscriptions one MCP connection may hold at once. */
export const MAX_SUBSCRIPTIONS = 1000;

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
      // The door checks the caller may read it (a caller cannot watch what it may not read).
      key = await warren.contributions.watch(principal, u);
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
