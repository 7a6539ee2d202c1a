/**
 * `fn` over `items` in order, letting the event loop turn (`setImmediate`) whenever `sliceMs`
 * has passed since it last did: long synchronous work over many items becomes slices, each
 * followed by the I/O that waited (checked every 32 items).
 */
export async function eachYielding<T>(
  items: readonly T[],
  sliceMs: number,
  fn: (item: T, index: number) => void,
): Promise<void> {
  let slice = performance.now();
  for (let i = 0; i < items.length; i++) {
    fn(items[i]!, i);
    if (i % 32 === 31 && performance.now() - slice >= sliceMs) {
      await new Promise((r) => setImmediate(r));
      slice = performance.now();
    }
  }
}
