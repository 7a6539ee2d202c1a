import SqliteDatabase from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dir = mkdtempSync(join(tmpdir(), 'wb-'));
const ddl = [
`CREATE TABLE "events" ("seq" integer primary key, "id" text not null unique, "zone" text not null, "ts" integer not null, "type" text not null, "actor" text not null, "session_id" text, "stream_id" text, "payload" text not null)`,
`create index "events_session_seq" on "events" ("session_id", "seq")`,
`create index "events_stream_seq" on "events" ("stream_id", "seq")`,
`create index "events_type_seq" on "events" ("type", "seq")`,
`create index "events_ts" on "events" ("ts")`];
const N = 100000, B = 100;
const rows: unknown[][] = [];
let id = 0;
for (let i = 1; i <= N; i++) rows.push([i, '01J' + String(1e12 + (id++)).padStart(23, '0'), 'bench', 1700000000000 + Math.floor(i / 100), i % 4 ? 'agent.output' : 'stream.message', 'ses_' + (i % 97), 'ses_' + (i % 97), i % 4 ? null : 'str_' + (i % 13), JSON.stringify({ i, text: 'the quick brown fox jumps over the lazy dog', tokens: { in: i % 1000, out: 42 } })]);
function open(name: string) { const db = new SqliteDatabase(join(dir, name)); db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); for (const d of ddl) db.exec(d); return db; }
for (const C of [1, 4, 8, 16, 32, 100, 1, 8, 16]) {
  const db = open('c' + C + Math.random() + '.db');
  const stmt = db.prepare('insert into events (seq, id, zone, ts, type, actor, session_id, stream_id, payload) values ' + Array(C).fill('(?,?,?,?,?,?,?,?,?)').join(','));
  const t = performance.now();
  for (let at = 0; at < N; at += B) {
    const batch = rows.slice(at, at + B);
    db.transaction(() => { for (let i = 0; i < batch.length; i += C) stmt.run(batch.slice(i, i + C).flat()); })();
  }
  const ms = performance.now() - t;
  console.log(C, Math.round(N / ms * 1000), 'rows/s');
  db.close();
}
rmSync(dir, { recursive: true });
