/**
 * The host's side is private (issue 7): on real files, the data dir is 0700 and the
 * database with its -wal and -shm files 0600, and looser ones are tightened on open with
 * a warning on stderr.
 */
import assert from 'node:assert/strict';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Store } from '../../src/store/store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';

const modeOf = (p: string) => statSync(p).mode & 0o777;

/** Collect what is written to stderr while `fn` runs. */
async function stderrOf(fn: () => Promise<void>): Promise<string> {
  const chunks: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stderr.write = write;
  }
  return chunks.join('');
}

const open = (url: string, dataDir?: string) =>
  Store.open(
    { url, durability: 'process', ...(dataDir ? { dataDir } : {}) },
    systemClock,
    createIds(systemClock),
  );

describe('file modes [sqlite]', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'warren-modes-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates the data dir 0700 and the database, -wal and -shm 0600', async () => {
    const dir = join(root, 'data', 'nested');
    const db = join(dir, 'warren.db');
    const store = await open(db);
    try {
      await store.writer.append([{ zone: 'z', type: 't', actor: 'a' }]);
      assert.equal(modeOf(dir), 0o700);
      assert.equal(modeOf(join(root, 'data')), 0o700);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) assert.equal(modeOf(f), 0o600, f);
    } finally {
      await store.close();
    }
  });

  it('tightens a looser database, -wal and -shm on open, with a warning naming each', async () => {
    const db = join(root, 'warren.db');
    await (await open(db)).close();
    chmodSync(db, 0o644);
    // Empty companions, as a crashed older version could leave them: SQLite starts them over.
    for (const f of [`${db}-wal`, `${db}-shm`]) {
      closeSync(openSync(f, 'a'));
      chmodSync(f, 0o644);
    }
    let store: Store | undefined;
    const err = await stderrOf(async () => {
      store = await open(db);
    });
    try {
      await store!.writer.append([{ zone: 'z', type: 't', actor: 'a' }]);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) {
        assert.equal(modeOf(f), 0o600, f);
        assert.match(err, new RegExp(`${f.replaceAll('.', '\\.')} was mode 0644; changed to 0600`));
      }
    } finally {
      await store!.close();
    }
  });

  it("tightens warren's own data dir; leaves a shared directory that merely holds the database alone", async () => {
    const dataDir = join(root, 'own');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const err = await stderrOf(async () => {
      await (await open(join(dataDir, 'warren.db'), dataDir)).close();
    });
    assert.equal(modeOf(dataDir), 0o700);
    assert.match(err, /own was mode 0755; changed to 0700/);

    const shared = join(root, 'shared');
    mkdirSync(shared, { mode: 0o755 });
    chmodSync(shared, 0o755);
    await (await open(join(shared, 'x.db'))).close();
    assert.equal(modeOf(shared), 0o755);
    assert.equal(modeOf(join(shared, 'x.db')), 0o600);
  });
});
