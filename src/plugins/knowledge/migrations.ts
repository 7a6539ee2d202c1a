import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectKind } from '../../store/dialect.ts';
import { existingTables } from '../../store/renames.ts';

/**
 * The knowledge plugin's tables: findings (with a full-text index kept by the database
 * itself, so no write path can forget it), their tags, and task workpads. `001_knowledge`
 * makes them under their current names (`knowledge_…`; indexes keep the names they always
 * had); a database made before `002_prefixed_names` holds their first names, and 002 renames
 * them there (store/renames.ts).
 */
export function knowledgeMigrations(kind: DialectKind): Record<string, Migration> {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    '001_knowledge': {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable('knowledge_findings')
          .addColumn('n', kind === 'postgres' ? 'bigserial' : 'integer', (c) =>
            kind === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
          )
          .addColumn('id', 'text', (c) => c.notNull().unique())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('title', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('tags', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('task_id', 'text')
          .addColumn('session_id', 'text')
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', big, (c) => c.notNull())
          .execute();
        // Start context reads a task's findings; listings page a zone's newest first.
        await db.schema
          .createIndex('findings_task')
          .on('knowledge_findings')
          .columns(['task_id', 'n'])
          .execute();
        await db.schema
          .createIndex('findings_zone')
          .on('knowledge_findings')
          .columns(['zone', 'n'])
          .execute();
        await db.schema
          .createTable('knowledge_finding_tags')
          .addColumn('finding_id', 'text', (c) => c.notNull())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('tag', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('finding_tags_pk', ['finding_id', 'tag'])
          .execute();
        await db.schema
          .createIndex('finding_tags_tag')
          .on('knowledge_finding_tags')
          .columns(['zone', 'tag', 'finding_id'])
          .execute();
        await db.schema
          .createTable('knowledge_workpads')
          .addColumn('task_id', 'text', (c) => c.primaryKey())
          .addColumn('zone', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('updated_by', 'text', (c) => c.notNull())
          .addColumn('updated_at', big, (c) => c.notNull())
          .execute();
        if (kind === 'postgres') await postgresIndex(db);
        else await sqliteIndex(db);
      },
    },
    // Every table carries the plugin's name (`knowledge_…`), renamed in place with its rows.
    // PostgreSQL's generated tsvector and its GIN index are the table's own and go with it.
    // SQLite's FTS5 table names its content table (`content='findings'`), which a rename does
    // not change: it and its triggers are dropped, and made again over the renamed table from
    // its rows (FTS5's `rebuild`), as `knowledge_findings_fts`. A fresh database has them so.
    '002_prefixed_names': {
      async up(db: Kysely<unknown>): Promise<void> {
        if (!(await existingTables(db, kind, ['findings'])).has('findings')) return;
        if (kind === 'sqlite') {
          for (const op of ['insert', 'delete', 'update'])
            await sql`drop trigger if exists ${sql.id(`findings_fts_${op}`)}`.execute(db);
          await sql`drop table if exists findings_fts`.execute(db);
        }
        await db.schema.alterTable('findings').renameTo('knowledge_findings').execute();
        await db.schema.alterTable('finding_tags').renameTo('knowledge_finding_tags').execute();
        await db.schema.alterTable('workpads').renameTo('knowledge_workpads').execute();
        if (kind === 'sqlite') {
          await sqliteIndex(db);
          await sql`insert into knowledge_findings_fts(knowledge_findings_fts) values ('rebuild')`.execute(
            db,
          );
        }
      },
    },
  };
}

/**
 * PostgreSQL: a stored, generated tsvector (title weighted A, tags B, body D) and a GIN index
 * on it. Generated: every insert and update keeps it, whoever writes the row.
 */
async function postgresIndex(db: Kysely<unknown>): Promise<void> {
  await sql`alter table knowledge_findings add column search tsvector generated always as (
      setweight(to_tsvector('english', title), 'A') ||
      setweight(to_tsvector('english', tags), 'B') ||
      setweight(to_tsvector('english', body), 'D')
    ) stored`.execute(db);
  await sql`create index findings_search on knowledge_findings using gin (search)`.execute(db);
}

/**
 * SQLite: an external-content FTS5 table over the findings (the text is stored once), kept in
 * step by triggers in the writing transaction. Porter stemming over unicode61, like
 * PostgreSQL's english configuration. The table and its triggers are named `<table>_fts…`.
 */
async function sqliteIndex(db: Kysely<unknown>): Promise<void> {
  const table = 'knowledge_findings';
  const content = sql.id(table);
  const fts = sql.id(`${table}_fts`);
  const trigger = (op: string) => sql.id(`${table}_fts_${op}`);
  // FTS5 takes the content table's name as a string option (a fixed name, not input).
  await sql`create virtual table ${fts} using fts5(
      title, body, tags, content=${sql.lit(table)}, content_rowid='n', tokenize='porter unicode61'
    )`.execute(db);
  await sql`create trigger ${trigger('insert')} after insert on ${content} begin
      insert into ${fts}(rowid, title, body, tags) values (new.n, new.title, new.body, new.tags);
    end`.execute(db);
  await sql`create trigger ${trigger('delete')} after delete on ${content} begin
      insert into ${fts}(${fts}, rowid, title, body, tags)
        values ('delete', old.n, old.title, old.body, old.tags);
    end`.execute(db);
  await sql`create trigger ${trigger('update')} after update on ${content} begin
      insert into ${fts}(${fts}, rowid, title, body, tags)
        values ('delete', old.n, old.title, old.body, old.tags);
      insert into ${fts}(rowid, title, body, tags) values (new.n, new.title, new.body, new.tags);
    end`.execute(db);
}
