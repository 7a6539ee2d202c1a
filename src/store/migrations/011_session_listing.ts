import type { Kysely } from 'kysely';

/**
 * Sessions listed by id within a zone (MCP resources, completion by id prefix): one range
 * on `(zone, id)`, in order, however many sessions the zone holds. Without it SQLite takes
 * the zone off `sessions_zone_status` and sorts the whole zone.
 */
export const sessionListing = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('sessions_zone_id').on('sessions').columns(['zone', 'id']).execute();
  },
};
