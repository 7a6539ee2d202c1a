import type { Kysely } from 'kysely';
import { WarrenError } from '../../vocab/errors.ts';
import type { CoordDelegationsTable, CoordInvocationsTable, CoordinatorDb } from './schema.ts';

/** What the coordinator's tables share: times shown as ISO, lookups in a zone. */

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

interface ByIdTables {
  invocation: CoordInvocationsTable;
  delegation: CoordDelegationsTable;
}
const TABLE = { invocation: 'coordinator_invocations', delegation: 'coordinator_delegations' } as const;

/** One row of `zone` by id; another zone's id is not_found, as an unknown one is. */
export async function rowInZone<K extends keyof ByIdTables>(
  db: Kysely<CoordinatorDb>,
  what: K,
  zone: string,
  id: string,
): Promise<ByIdTables[K]> {
  const row = await db
    .selectFrom(TABLE[what] as 'coordinator_invocations')
    .selectAll()
    .where('id', '=', id)
    .where('zone', '=', zone)
    .executeTakeFirst();
  if (!row) throw new WarrenError('not_found', `${what} ${id} does not exist in zone ${zone}`, { what, id });
  return row as unknown as ByIdTables[K];
}
