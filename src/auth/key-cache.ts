import { keyHash, operatorOfHash } from '../kernel/operator-keys.ts';
import type { Store } from '../store/store.ts';

/** Far more live operator keys than any deployment holds; past it, lookups just go to the store. */
const MAX_CACHED = 1024;

/**
 * Operator keys verified live, by hash, so an authenticated request costs a hash and a Map
 * lookup instead of a query. Only live keys are kept (an unknown key always asks the store).
 * Every key revocation this node commits empties it before the revoking call returns (the
 * writer runs commit listeners first); a lookup in flight across a revocation keeps nothing.
 * In a cluster another node may revoke a key, and this one hears of it only later: no cache there.
 */
export class OperatorKeyCache {
  private readonly names = new Map<string, string>();
  /** Bumped by each revocation: a lookup that started before it must not refill the cache. */
  private generation = 0;

  constructor(
    store: Pick<Store, 'writer'>,
    /** The store's answer for a hash (a parameter so a test can hold it in flight). */
    private readonly lookup: (h: string) => Promise<string | null> = (h) => operatorOfHash(store as Store, h),
  ) {
    store.writer.onCommit((events) => {
      for (const e of events) {
        if (e.type !== 'operator.key_revoked') continue;
        this.names.clear();
        this.generation++;
        return;
      }
    });
  }

  /** The operator name behind a key, or null. */
  async verify(key: string): Promise<string | null> {
    if (!key.startsWith('wk_')) return null;
    const h = keyHash(key);
    const hit = this.names.get(h);
    if (hit !== undefined) return hit;
    const generation = this.generation;
    const name = await this.lookup(h);
    if (name !== null && generation === this.generation && this.names.size < MAX_CACHED)
      this.names.set(h, name);
    return name;
  }
}
