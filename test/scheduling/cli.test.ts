/**
 * `warren schedule …`: the real CLI (in this process, to keep the file fast on a loaded
 * machine) over real HTTP to a warren: every command, and bad input named by its field.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { cli } from '../cli/helpers.ts';
import { startHttp } from '../helpers/http.ts';
import { forEachWarren } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: CLI JSON is checked by the syscalls' schemas
type Any = any;

forEachWarren(
  'scheduling: the CLI',
  (t) => {
    it('warren schedule create|list|show|pause|resume|run-now|delete', async () => {
      const h = await startHttp(t);
      const env = { WARREN_URL: h.url, WARREN_API_KEY: h.key };
      const run = (...args: string[]) => cli(args, { env, columns: 400 });
      const live = {
        cli: run,
        async ok(...args: string[]) {
          const r = await run(...args);
          assert.equal(r.code, 0, `warren ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
          return r.stdout;
        },
      };
      const json = async (...args: string[]): Promise<Any> => JSON.parse(await live.ok(...args, '--json'));
      await live.ok('streams', 'create', 'ops');
      const made = (
        await json(
          'schedule',
          'create',
          'nightly',
          '--cron',
          '0 2 * * *',
          '--tz',
          'Europe/Paris',
          '--stream',
          '{"stream":"ops","message":"good night"}',
          '--overlap',
          'skip-if-running',
        )
      ).schedule;
      assert.equal(made.kind, 'cron');
      assert.equal(made.tz, 'Europe/Paris');
      assert.match(await live.ok('schedule', 'list'), /nightly/);
      assert.equal((await json('schedule', 'pause', made.id)).schedule.enabled, false);
      assert.equal((await json('schedule', 'resume', made.id)).schedule.enabled, true);
      const fire = (await json('schedule', 'run-now', made.id)).fire;
      assert.equal(fire.manual, true);
      let shown: Any;
      for (let i = 0; i < 50; i++) {
        shown = await json('schedule', 'show', made.id);
        if (shown.fires[0]?.status === 'ok') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(shown.fires[0].status, 'ok');
      assert.equal(shown.schedule.lastOutcome, 'ok');

      const badCron = await live.cli(
        'schedule',
        'create',
        'x',
        '--cron',
        '0 2 * *',
        '--stream',
        '{"stream":"ops","message":"m"}',
      );
      assert.notEqual(badCron.code, 0);
      assert.match(badCron.stderr + badCron.stdout, /cron: /);
      const badTz = await live.cli(
        'schedule',
        'create',
        'x',
        '--cron',
        '0 2 * * *',
        '--tz',
        'Europe/Atlantis',
        '--stream',
        '{"stream":"ops","message":"m"}',
      );
      assert.match(badTz.stderr + badTz.stdout, /tz: unknown time zone/);
      const past = [
        'schedule',
        'create',
        'late',
        '--at',
        '2020-01-01T00:00:00Z',
        '--stream',
        '{"stream":"ops","message":"m"}',
      ];
      const refused = await live.cli(...past);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr + refused.stdout, /at: .*in the past.*--now-if-past/);
      const late = (await json(...past, '--now-if-past')).schedule;
      assert.equal(late.kind, 'once');

      assert.equal((await json('schedule', 'delete', made.id)).deleted, made.id);
      const gone = await live.cli('schedule', 'show', made.id);
      assert.notEqual(gone.code, 0);
    });
  },
  ['sqlite'],
);
