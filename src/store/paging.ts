/** A page of a keyset-paged list: its rows, and the key to continue after (null at the end). */
export interface KeysetPage<T> {
  items: T[];
  next: string | null;
}

/**
 * Keyset paging: one page of a list read in key order from a cursor on. `read(n)` reads at
 * most `n` rows; it is asked for one row past the page (`limit + 1`), so the extra row says
 * whether another page follows without a count. The page is the first `limit` rows, and
 * `next` the last one's key (its `id`, or what `key` picks) when the extra row came back,
 * else null. A page costs its own rows, never the table's.
 */
export function keysetPage<T extends { id: string }>(
  limit: number,
  read: (n: number) => Promise<readonly T[]>,
): Promise<KeysetPage<T>>;
export function keysetPage<T>(
  limit: number,
  read: (n: number) => Promise<readonly T[]>,
  key: (row: T) => string,
): Promise<KeysetPage<T>>;
export async function keysetPage<T>(
  limit: number,
  read: (n: number) => Promise<readonly T[]>,
  key: (row: T) => string = (row) => (row as { id: string }).id,
): Promise<KeysetPage<T>> {
  const rows = await read(limit + 1);
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last !== undefined ? key(last) : null };
}
