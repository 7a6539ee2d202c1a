import SqliteDatabase from 'better-sqlite3';
import { systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';

/**
 * Grow a warren's log to `target` events fast, with the warren closed: batched inserts
 * straight into `events` on one better-sqlite3 connection, `log_head` moved in the same
 * transaction so seqs stay gap-free and the kernel's next append follows on. Ids come from
 * the kernel's own generator (monotonic ULIDs). The filler looks like old traffic: agent
 * output of sessions long gone and messages on rooms long closed, spread over many ids, so
 * per-session and per-stream indexes see realistic fan-out. Returns how many were added.
 */
export function fillLog(dbFile: string, target: number, batch = 20_000): number {
  const db = new SqliteDatabase(dbFile);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const ids = createIds(systemClock);
    const head = () =>
      Number((db.prepare('select seq from log_head where id = 1').get() as { seq: number }).seq);
    const insert = db.prepare(
      'insert into events (seq, id, zone, ts, type, actor, session_id, stream_id, payload) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const setHead = db.prepare('update log_head set seq = ? where id = 1');
    const write = db.transaction((from: number, count: number) => {
      const ts = Date.now();
      for (let seq = from + 1; seq <= from + count; seq++) {
        const k = seq % 997;
        if (seq % 3 === 0) {
          const stream = `str_filler_${k % 101}`;
          insert.run(
            seq,
            ids.event(),
            'default',
            ts,
            'stream.message',
            'operator:filler',
            null,
            stream,
            JSON.stringify({ text: `old message ${seq}`, kind: 'message' }),
          );
        } else {
          const session = `ses_filler_${k}`;
          insert.run(
            seq,
            ids.event(),
            'default',
            ts,
            'session.output',
            session,
            session,
            null,
            JSON.stringify({ text: `old output ${seq}: the quick brown fox jumps over the lazy dog` }),
          );
        }
      }
      setHead.run(from + count);
    });
    const start = head();
    for (let at = start; at < target; ) {
      const count = Math.min(batch, target - at);
      write(at, count);
      at += count;
    }
    return Math.max(0, target - start);
  } finally {
    db.close();
  }
}
