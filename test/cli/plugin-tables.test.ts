/**
 * The schedule and knowledge commands print tables and `key  value` details with ISO 8601
 * times, like every other command (issue 28: they printed raw JSON with epoch milliseconds);
 * `--json` still prints the syscall's output. The CLI in this process over real HTTP to a
 * warren, on both backends.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { forEachWarren } from '../helpers/warrens.ts';
import { cli } from './helpers.ts';

const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;
/** An epoch-millisecond time (13 digits) anywhere: what the raw JSON printed. */
const EPOCH_MS = /\b1\d{12}\b/;

forEachWarren('CLI: schedule and knowledge output reads like the other commands', (t) => {
  it('schedule list|show|pause, knowledge post|search|show: tables, ISO times, no JSON; --json keeps JSON', async () => {
    const h = await startHttp(t);
    const env = { WARREN_URL: h.url, WARREN_API_KEY: h.key };
    const run = async (...args: string[]) => {
      const r = await cli(args, { env, columns: 400 });
      assert.equal(r.code, 0, `warren ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
      return r.stdout;
    };
    /** No epoch milliseconds; a table or details, not a JSON document (an action template may be JSON). */
    const plain = (out: string) => {
      assert.doesNotMatch(out, EPOCH_MS, out);
      assert.doesNotMatch(out, /^[{[]/, out);
    };
    await run('streams', 'create', 'ops');
    const made = JSON.parse(
      await run(
        'schedule',
        'create',
        'ping',
        '--interval-ms',
        '300000',
        '--stream',
        '{"stream":"ops","message":"ping"}',
        '--json',
      ),
    ).schedule;
    assert.equal(typeof made.nextFireAt, 'number');

    const list = await run('schedule', 'list');
    plain(list);
    assert.doesNotMatch(list, /[{[]"/, list);
    const [head, row] = list.split('\n');
    assert.match(head!, /^ID\s+Name\s+When\s+Action\s+State\s+Next fire\s+Last fire\s+Fires$/);
    assert.match(row!, new RegExp(`^${made.id}\\s+ping\\s+every 5m\\s+stream ops\\s+enabled\\s+`));
    assert.ok(row!.includes(new Date(made.nextFireAt).toISOString()), row);

    const show = await run('schedule', 'show', made.id);
    plain(show);
    assert.match(
      show,
      new RegExp(`^next fire\\s+${new Date(made.nextFireAt).toISOString()} \\(in \\d+m\\)$`, 'm'),
    );
    assert.match(show, /^last fire\s+never$/m);
    assert.match(show, /^fires\nnone yet$/m);
    const paused = await run('schedule', 'pause', made.id);
    plain(paused);
    assert.match(paused, /^state\s+paused$/m);

    const posted = JSON.parse(
      await run(
        'knowledge',
        'post',
        'cold cache',
        '--body',
        'first requests take 2 s',
        '--tags',
        '["perf"]',
        '--json',
      ),
    ).finding;
    const search = await run('knowledge', 'search', 'cold');
    plain(search);
    assert.doesNotMatch(search, /[{[]"/, search);
    const [sHead, sRow] = search.split('\n');
    assert.match(sHead!, /^ID\s+Title\s+Tags\s+Task\s+Created\s+Score\s+Body$/);
    assert.match(sRow!, new RegExp(`^${posted.id}\\s+cold cache\\s+perf\\s+`));
    assert.ok(sRow!.includes(new Date(posted.createdAt).toISOString()), sRow);
    const shown = await run('knowledge', 'show', posted.id);
    plain(shown);
    assert.match(shown, new RegExp(`^created\\s+${ISO.source}$`, 'm'));
    assert.match(shown, /\n\nfirst requests take 2 s\n$/);
    assert.equal(
      JSON.parse(await run('knowledge', 'show', posted.id, '--json')).finding.createdAt,
      posted.createdAt,
    );
  });
});
