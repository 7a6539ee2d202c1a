import SqliteDatabase from 'better-sqlite3';

/**
 * The honest floor of a durable append on SQLite: a bare better-sqlite3 database with the
 * events table as a migrated store has it (same columns and indexes), the store's pragmas,
 * and one transaction inserting one message event. Benches compare warren's paths with it.
 */

/** The `events` table's DDL (table, then indexes) of a migrated store's file. */
export function eventsDdl(dbFile: string): string[] {
  const src = new SqliteDatabase(dbFile, { readonly: true });
  try {
    return (
      src
        .prepare(
          `select sql from sqlite_master where tbl_name = 'events' and sql is not null order by type desc`,
        )
        .all() as Array<{ sql: string }>
    ).map((r) => r.sql);
  } finally {
    src.close();
  }
}

export interface SqliteFloor {
  /** One committed insert of a message event; its seq. */
  append(text: string): number;
  close(): void;
}

/** A database with the store's pragmas and the given `events` DDL, and a prepared one-row insert. */
export function floorDb(file: string, ddl: readonly string[]) {
  const db = new SqliteDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  for (const sql of ddl) db.exec(sql);
  const insert = db.prepare(
    'insert into events (seq, id, zone, ts, type, actor, session_id, stream_id, payload) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return { db, insert };
}

export function sqliteFloor(file: string, ddl: readonly string[]): SqliteFloor {
  const { db, insert } = floorDb(file, ddl);
  let seq = 0;
  const append = db.transaction((text: string) => {
    seq++;
    insert.run(
      seq,
      `evt_${String(seq).padStart(26, '0')}`,
      'default',
      Date.now(),
      'stream.message',
      'operator:bench',
      null,
      'str_bench',
      JSON.stringify({ text, kind: 'message' }),
    );
    return seq;
  });
  return { append: (text) => append(text), close: () => db.close() };
}
