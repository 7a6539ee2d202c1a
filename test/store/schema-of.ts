/**
 * A database's schema as comparable text: every table with its columns, every index with its
 * columns, uniqueness and predicate, every trigger and constraint. Two databases that answer
 * the same here hold the same tables, keys and indexes, whatever path made them.
 *
 * On PostgreSQL the names PostgreSQL makes up itself follow the table's first name (a primary
 * key's `<table>_pkey`, a unique column's `<table>_<column>_key`, a serial column's sequence),
 * and a rename keeps them: those are left out, the definitions they stand for are kept.
 */
import { sql } from 'kysely';
import type { Store } from '../../src/store/store.ts';

export async function schemaOf(store: Store): Promise<string[]> {
  return store.kind === 'sqlite' ? sqliteSchema(store) : postgresSchema(store);
}

async function sqliteSchema(store: Store): Promise<string[]> {
  const db = store.reader;
  const out: string[] = [];
  const objects = (
    await sql<{ type: string; name: string; tbl: string; sql: string | null }>`
      select type, name, tbl_name as tbl, sql from sqlite_master
      where name not like 'sqlite\\_stat%' escape '\\' order by type, name`.execute(db)
  ).rows;
  for (const o of objects) {
    if (o.type === 'table') {
      const cols = (
        await sql<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>`
          select name, type, "notnull", dflt_value, pk from pragma_table_info(${o.name})`.execute(db)
      ).rows;
      // A virtual table's statement names its content table and options: it is its definition.
      const virtual = o.sql?.toLowerCase().startsWith('create virtual table') ? ` ${o.sql}` : '';
      out.push(`table ${o.name}${virtual}`);
      for (const c of cols)
        out.push(
          `  column ${o.name}.${c.name} ${c.type} notnull=${c.notnull} default=${c.dflt_value} pk=${c.pk}`,
        );
    } else if (o.type === 'index') {
      const info = (
        await sql<{ unique: number; partial: number }>`
          select "unique", partial from pragma_index_list(${o.tbl}) where name = ${o.name}`.execute(db)
      ).rows[0];
      const cols = (
        await sql<{
          name: string | null;
        }>`select name from pragma_index_info(${o.name}) order by seqno`.execute(db)
      ).rows.map((c) => c.name);
      const where = /\bwhere\b(.*)$/is.exec(o.sql ?? '')?.[1]?.trim() ?? '';
      out.push(
        `index ${o.name} on ${o.tbl} (${cols.join(', ')}) unique=${info?.unique} partial=${info?.partial} ${where}`,
      );
    } else {
      out.push(`${o.type} ${o.name} on ${o.tbl}: ${o.sql}`);
    }
  }
  return out.sort();
}

async function postgresSchema(store: Store): Promise<string[]> {
  const db = store.reader;
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
  const out: string[] = [];
  const cols = (
    await sql<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
      generation_expression: string | null;
    }>`select table_name, column_name, data_type, is_nullable, column_default, generation_expression
       from information_schema.columns where table_schema = current_schema()`.execute(db)
  ).rows;
  for (const c of cols) {
    const dflt = c.column_default?.replace(/nextval\('[^']*'::regclass\)/, 'nextval(serial)') ?? null;
    out.push(
      `column ${c.table_name}.${c.column_name} ${c.data_type} nullable=${c.is_nullable} default=${dflt} generated=${c.generation_expression}`,
    );
  }
  const indexes = (
    await sql<{ table: string; name: string; def: string; backs: boolean }>`
      select i.tablename as table, i.indexname as name, i.indexdef as def,
        exists (select 1 from pg_constraint k where k.conindid = c.oid) as backs
      from pg_indexes i
      join pg_class c on c.relname = i.indexname
      join pg_namespace n on n.oid = c.relnamespace and n.nspname = i.schemaname
      where i.schemaname = current_schema()`.execute(db)
  ).rows;
  for (const i of indexes) {
    // A constraint's index is named by the constraint (below); the definition is what counts.
    const name = i.backs ? '(constraint)' : i.name;
    const def = i.def.replaceAll(`${schema}.`, '').replace(` ${i.name} ON `, ` ${name} ON `);
    out.push(`index ${i.table} ${def}`);
  }
  const constraints = (
    await sql<{ table: string; name: string; type: string; def: string }>`
      select r.relname as table, k.conname as name, k.contype as type, pg_get_constraintdef(k.oid) as def
      from pg_constraint k
      join pg_class r on r.oid = k.conrelid
      join pg_namespace n on n.oid = r.relnamespace
      where n.nspname = current_schema()`.execute(db)
  ).rows;
  for (const k of constraints) {
    // Named by PostgreSQL after the table (`tasks_pkey`, `findings_id_key`): the name is left out.
    const madeUp = k.name.endsWith('_pkey') || k.name.endsWith('_key') || k.name.endsWith('_not_null');
    out.push(`constraint ${k.table} ${madeUp ? '' : k.name} ${k.type} ${k.def}`);
  }
  const triggers = (
    await sql<{ table: string; name: string }>`
      select event_object_table as table, trigger_name as name from information_schema.triggers
      where trigger_schema = current_schema()`.execute(db)
  ).rows;
  for (const t of triggers) out.push(`trigger ${t.name} on ${t.table}`);
  return out.sort();
}
