import assert from 'node:assert/strict';
import { it } from 'node:test';
import { OperatorKeyCache } from '../../src/auth/key-cache.ts';
import { keyHash } from '../../src/kernel/operator-keys.ts';
import type { LogEvent } from '../../src/store/events.ts';
import type { Store } from '../../src/store/store.ts';

/** A store stand-in: commits are announced by hand; lookups answer from `live`, when released. */
function fixture() {
  let listener: (events: readonly LogEvent[]) => void = () => {};
  const store = {
    writer: {
      onCommit: (l: typeof listener) => {
        listener = l;
        return () => {};
      },
    },
  } as unknown as Pick<Store, 'writer'>;
  const live = new Map<string, string>();
  const held: Array<() => void> = [];
  let lookups = 0;
  let hold = false;
  const cache = new OperatorKeyCache(store, async (h) => {
    lookups++;
    if (hold) await new Promise<void>((r) => held.push(r));
    return live.get(h) ?? null;
  });
  const commit = (type: string) => listener([{ type } as LogEvent]);
  return {
    cache,
    live,
    commit,
    lookups: () => lookups,
    hold: (on: boolean) => {
      hold = on;
    },
    release: () => {
      for (const r of held.splice(0)) r();
    },
  };
}

it('a live key is looked up once; a revocation empties the cache', async () => {
  const f = fixture();
  f.live.set(keyHash('wk_a'), 'alice');
  assert.equal(await f.cache.verify('wk_a'), 'alice');
  assert.equal(await f.cache.verify('wk_a'), 'alice');
  assert.equal(f.lookups(), 1);
  f.commit('stream.message');
  assert.equal(await f.cache.verify('wk_a'), 'alice');
  assert.equal(f.lookups(), 1, 'other commits keep it');
  f.live.delete(keyHash('wk_a'));
  f.commit('operator.key_revoked');
  assert.equal(await f.cache.verify('wk_a'), null);
  assert.equal(await f.cache.verify('wk_nope'), null);
  assert.equal(await f.cache.verify('not-a-key'), null);
  assert.equal(f.lookups(), 3, 'unknown keys always ask the store; non-keys never');
});

it('a lookup in flight across a revocation does not put the key back', async () => {
  const f = fixture();
  f.live.set(keyHash('wk_a'), 'alice');
  f.hold(true);
  const inFlight = f.cache.verify('wk_a');
  f.commit('operator.key_revoked');
  f.release();
  // It read the key live before the revocation committed; the next request must ask again.
  assert.equal(await inFlight, 'alice');
  f.live.delete(keyHash('wk_a'));
  f.hold(false);
  assert.equal(await f.cache.verify('wk_a'), null);
});
