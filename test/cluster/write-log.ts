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

/**
 * Ownership recorded too (for a run with many faults): `lost_log` gets each node declared lost
 * with the lease it had, `own_log` each change of a session's owner, `join_log` each new
 * epoch of a node. With recordWrites, what
 * `lateWrites` needs.
 */
export async function recordOwnership(store: Store, schema: string): Promise<void> {
  await sql
    .raw(`create table "${schema}".lost_log (node text, epoch bigint, lease_until double precision, at double precision, tx bigint);
      create table "${schema}".own_log (session text, old_owner text, new_owner text, at double precision, tx bigint);
      create table "${schema}".join_log (node text, epoch bigint, at double precision);
      create function "${schema}".log_join() returns trigger language plpgsql as $f$ begin
        insert into "${schema}".join_log values (NEW.id, NEW.epoch, extract(epoch from clock_timestamp()) * 1000);
        return NEW; end $f$;
      create trigger log_join after update on "${schema}".nodes for each row
        when (OLD.epoch is distinct from NEW.epoch) execute function "${schema}".log_join();
      create function "${schema}".log_lost() returns trigger language plpgsql as $f$ begin
        insert into "${schema}".lost_log values (NEW.id, NEW.epoch, NEW.lease_until,
          extract(epoch from clock_timestamp()) * 1000, txid_current());
        return NEW; end $f$;
      create function "${schema}".log_owner() returns trigger language plpgsql as $f$ begin
        insert into "${schema}".own_log values (NEW.id, OLD.owner_node, NEW.owner_node,
          extract(epoch from clock_timestamp()) * 1000, txid_current());
        return NEW; end $f$;
      create trigger log_lost after update on "${schema}".nodes for each row
        when (NEW.state = 'lost' and OLD.state <> 'lost') execute function "${schema}".log_lost();
      create trigger log_owner after update on "${schema}".sessions for each row
        when (OLD.owner_node is distinct from NEW.owner_node) execute function "${schema}".log_owner();`)
    .execute(store.reader);
}

/**
 * Rows a node wrote for a session after its lease ended, the session having been taken from
 * it when it was declared lost (in that transaction), before the session was given back to it and before the node
 * joined again as a new epoch (from then on its rows are the new epoch's: a takeover it makes
 * writes sessions that were once its own). What the lost epoch had in flight cannot commit
 * after that: the takeover ended its connections first (takeover.ts).
 */
export async function lateWrites(
  store: Store,
  schema: string,
): Promise<Array<{ tbl: string; session: string; app: string; at: number; lease_until: number }>> {
  const t = (name: string) => sql.table(`${schema}.${name}`);
  const r = await sql<{ tbl: string; session: string; app: string; at: number; lease_until: number }>`
    select w.tbl, w.session, w.app, w.at, l.lease_until from ${t('lost_log')} l
    join ${t('own_log')} o on o.tx = l.tx and o.old_owner = l.node
    join ${t('write_log')} w on w.session = o.session and w.at > l.lease_until
      and (w.app = 'warren ' || l.node or w.app like 'warren ' || l.node || ' %')
    where not exists (select 1 from ${t('own_log')} b where b.session = o.session
      and b.new_owner = l.node and b.at > l.lease_until and b.at < w.at)
      and not exists (select 1 from ${t('join_log')} j where j.node = l.node
      and j.at > l.at and j.at < w.at)`.execute(store.reader);
  return r.rows;
}

/**
 * Nodes on one machine as if on separate hosts: each agent process record is tagged with the
 * recording node's name in its boot id, so no node takes another's records for its own host's
 * and ends them at a takeover (only the agents' own watchers may).
 */
export async function separateHosts(store: Store, schema: string): Promise<void> {
  await sql
    .raw(`create function "${schema}".tag_host() returns trigger language plpgsql as $f$ begin
        NEW.boot_id := coalesce(NEW.boot_id, '') || '@' || split_part(current_setting('application_name'), ' ', 2);
        return NEW; end $f$;
      create trigger tag_host before insert on "${schema}".agent_procs for each row
        execute function "${schema}".tag_host();`)
    .execute(store.reader);
}
