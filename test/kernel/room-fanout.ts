/**
 * The room fan-out (issue 25): messages written into a room with async listeners, and
 * what that costs the database. Shared by the test (test/kernel/room-storage.test.ts) and the
 * bench (`roomStorage`, bench/rooms.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Warren } from '../../src/syscalls/warren.ts';
import { parseJson } from '../../src/util/json.ts';
import { operator } from '../../src/vocab/principal.ts';

const op = operator();

export interface RoomRun {
  warren: Warren;
  /** The operator's fd on the room. */
  fd: number;
  listeners: string[];
}

/** A warren's room with `listeners` script agents attached to it, async (each takes input as turns). */
export async function roomWithListeners(warren: Warren, listeners: number, room = 'room'): Promise<RoomRun> {
  const { fd } = (await warren.call(op, 'streams_create', { name: room })) as { fd: number };
  const ids: string[] = [];
  for (let i = 0; i < listeners; i++) {
    const { session } = (await warren.call(op, 'ipc_spawn', {
      runtime: 'script',
      script: { steps: [{ listen: {} }] },
      pipe: 'detach',
    })) as { session: { id: string } };
    await warren.call(op, 'streams_attach', { session: session.id, stream: room, mode: 'async' });
    ids.push(session.id);
  }
  return { warren, fd, listeners: ids };
}

/**
 * Until every listener has taken every one of `seqs` as input (its `session.input` events name
 * them), read from the table as stored, not through a view that gives the text back.
 */
export async function allTaken(run: RoomRun, seqs: readonly number[], ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  const want = new Set(seqs);
  for (;;) {
    const rows = await run.warren.store.reader
      .selectFrom('events')
      .select(['session_id', 'payload'])
      .where('type', '=', 'session.input')
      .where('session_id', 'in', run.listeners)
      .execute();
    const taken = new Map<string, number>();
    for (const r of rows) {
      const p = parseJson<{ seqs?: number[] }>(r.payload, {});
      const n = (p.seqs ?? []).filter((s) => want.has(s)).length;
      taken.set(r.session_id ?? '', (taken.get(r.session_id ?? '') ?? 0) + n);
    }
    if (run.listeners.every((id) => (taken.get(id) ?? 0) >= want.size)) return;
    if (Date.now() > deadline)
      throw new Error(`listeners took ${[...taken.values()].join(',')} of ${want.size}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The database's size as SQLite counts it (pages in use or free, WAL included), from a connection of its own. */
export function sqliteBytes(file: string): number {
  const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    const pages = Number(db.pragma('page_count', { simple: true }));
    const size = Number(db.pragma('page_size', { simple: true }));
    return pages * size;
  } finally {
    db.close();
  }
}

export interface Growth {
  listeners: number;
  payloadBytes: number;
  growthBytes: number;
  /** growth / payload. */
  ratio: number;
}

/**
 * `messages` messages of `kib` KiB into a room of `listeners` async listeners on a fresh SQLite
 * file: how much the database grew, from after the room was set up to after every listener took
 * every message.
 */
export async function roomGrowth(opts: {
  listeners: number;
  messages: number;
  kib: number;
}): Promise<Growth> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-fanout-'));
  const file = join(dir, 'warren.db');
  const warren = await Warren.open({
    dataDir: dir,
    kernel: {
      containment: 'none',
      resumeOnStart: false,
      limits: { maxDepth: 10, maxChildren: 10_000, maxSessionsPerZone: 10_000 },
    },
    metrics: false,
  });
  try {
    const run = await roomWithListeners(warren, opts.listeners);
    await warren.store.writer.drained();
    const before = sqliteBytes(file);
    const body = 'x'.repeat(opts.kib * 1024);
    const seqs: number[] = [];
    for (let i = 0; i < opts.messages; i++) {
      const { seq } = (await warren.call(op, 'ipc_write', { fd: run.fd, message: body })) as { seq: number };
      seqs.push(seq);
    }
    await allTaken(run, seqs);
    await warren.store.writer.drained();
    const growthBytes = sqliteBytes(file) - before;
    const payloadBytes = opts.messages * body.length;
    return { listeners: opts.listeners, payloadBytes, growthBytes, ratio: growthBytes / payloadBytes };
  } finally {
    await warren.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
