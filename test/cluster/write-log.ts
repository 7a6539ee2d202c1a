import { sql } from 'kysely';
import type { Store } from '../../src/store/store.ts';

/**
 * Triggers that record which connection (its application_name: `warren <node>…`) wrote each
 * events row, fds update and sessions update, for which session, and when (the database's
 * clock, milliseconds): the issue 26 method for "no row written by a node for a session after
 * its lease ended".
 */
export async function recordWrites(store: Store, schema: string): Promise<void> {
  await sql
    .raw(`create table "${schema}".write_log (tbl text, session text, app text, at double precision);
      create function "${schema}".log_write() returns trigger language plpgsql as $f$ begin
        insert into "${schema}".write_log values (TG_TABLE_NAME, to_jsonb(NEW)->>TG_ARGV[0],
          current_setting('application_name'), extract(epoch from clock_timestamp()) * 1000);
        return NEW; end $f$;
      create trigger log_events after insert on "${schema}".events for each row execute function "${schema}".log_write('session_id');
      create trigger log_fds after update on "${schema}".fds for each row execute function "${schema}".log_write('holder');
      create trigger log_sessions after update on "${schema}".sessions for each row execute function "${schema}".log_write('id');`)
    .execute(store.reader);
}

/** Rows `node` wrote for any of `sessions` after `at` (ms). */
export async function writesAfter(
  store: Store,
  schema: string,
  node: string,
  sessions: readonly string[],
  at: number,
): Promise<Array<{ tbl: string; session: string; app: string; at: number }>> {
  const r = await sql<{ tbl: string; session: string; app: string; at: number }>`
    select tbl, session, app, at from ${sql.table(`${schema}.write_log`)}
    where app like ${`warren ${node}%`} and session in (${sql.join([...sessions])}) and at > ${at}`.execute(
    store.reader,
  );
  return r.rows;
}
