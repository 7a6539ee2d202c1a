/**
 * Another process writing the same SQLite file (an operator's `sqlite3`, a backup, a test
 * seeding rows) must not fail warren's writes: a write unit that reads before it writes waits
 * for the other writer's lock under the busy timeout, and then sees what that writer committed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';

const require = createRequire(import.meta.url);

forEachStore(
  'store: another writer on the SQLite file',
  (target) => {
    it('a unit that reads then writes waits for the other writer and commits after it', async () => {
      const location = target.location();
      const store = await target.open({ location });
      await store.writer.append([{ zone: 'z1', type: 'test.first', actor: 'kernel', payload: {} }]);

      // The other writer, in a process of its own: it takes SQLite's write lock, inserts a row,
      // says so, and commits 300 ms later. (In this process it could not: a wait for the lock
      // holds this thread.)
      const other = spawn(
        process.execPath,
        [
          '-e',
          `const db = new (require(${JSON.stringify(require.resolve('better-sqlite3'))}))(process.argv[1]);
           db.exec('begin immediate');
           db.prepare("insert into settings (key, value) values ('other', '1')").run();
           process.stdout.write('locked\\n');
           setTimeout(() => { db.exec('commit'); db.close(); }, 300);`,
          location.url,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        const [line] = await once(other.stdout, 'data');
        assert.equal(String(line).trim(), 'locked');

        // Reads first, then writes: a deferred transaction would read the snapshot from before
        // the other writer's commit and get SQLITE_BUSY at its first write, whatever the timeout.
        const sawOther = await store.writer.write(async (tx) => {
          const before = await tx.db
            .selectFrom('settings')
            .select('key')
            .where('key', '=', 'other')
            .execute();
          tx.append({
            zone: 'z1',
            type: 'test.after',
            actor: 'kernel',
            payload: { sawOther: before.length },
          });
          await tx.db.insertInto('settings').values({ key: 'mine', value: '1' }).execute();
          return before.length;
        });

        // It ran once the lock was free, on the rows as the other writer left them.
        assert.equal(sawOther, 1);
        const keys = (await store.reader.selectFrom('settings').select('key').execute()).map((r) => r.key);
        assert.ok(keys.includes('other') && keys.includes('mine'), keys.join());
        assert.equal(await store.log.head(), 2);
      } finally {
        other.kill('SIGKILL');
      }
    });
  },
  { backends: ['sqlite'] },
);
