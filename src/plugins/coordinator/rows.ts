import type { WriteTx } from '../../store/writer.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { type CoordDelegationsTable, type CoordInvocationsTable, cdb } from './schema.ts';

/** What the coordinator's tables share: times shown as ISO, lookups in a zone. */

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

interface ByIdTables {
  invocation: CoordInvocationsTable;
  delegation: CoordDelegationsTable;
}
const TABLE = { invocation: 'coord_invocations', delegation: 'coord_delegations' } as const;

/** One row of `zone` by id; another zone's id is not_found, as an unknown one is. */
export async function rowInZone<K extends keyof ByIdTables>(
  db: WriteTx['db'],
  what: K,
  zone: string,
  id: string,
): Promise<ByIdTables[K]> {
  const row = await cdb(db)
    .selectFrom(TABLE[what] as 'coord_invocations')
    .selectAll()
    .where('id', '=', id)
    .where('zone', '=', zone)
    .executeTakeFirst();
  if (!row) throw new WarrenError('not_found', `${what} ${id} does not exist in zone ${zone}`, { what, id });
  return row as unknown as ByIdTables[K];
}
