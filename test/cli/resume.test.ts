/**
 * `warren suspend` then `warren resume`: the CLI in this process over real HTTP to a warren,
 * on both backends. The resume answer shows the session as it is after the resume (issue 28:
 * it printed the stale `status suspended`).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { call, forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';
import { cli } from './helpers.ts';

forEachWarren('CLI: resume prints the state after the resume', (t) => {
  it('SIGSTOP then resume: the line and --json say running or idle, never suspended', async () => {
    const h = await startHttp(t);
    const env = { WARREN_URL: h.url, WARREN_API_KEY: h.key };
    const run = async (...args: string[]) => {
      const r = await cli(args, { env, columns: 200 });
      assert.equal(r.code, 0, `warren ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
      return r.stdout;
    };
    const { session } = await call(h.warren, 'ipc_spawn', { script: idleScript, title: 'sleeper' });
    await waitStatus(h.warren, session.id, 'idle');
    assert.match(await run('suspend', session.id), /SIGSTOP: suspended 1 session/);
    await waitStatus(h.warren, session.id, 'suspended');
    const line = await run('resume', session.id);
    assert.match(line, new RegExp(`^resumed ${session.id} — status (running|idle)`), line);
    assert.match(line, new RegExp(`SIGCONT: ${session.id}`));

    // --json gives the same after-the-resume session.
    await waitStatus(h.warren, session.id, 'idle');
    await run('suspend', session.id);
    await waitStatus(h.warren, session.id, 'suspended');
    const out = JSON.parse(await run('resume', session.id, '--json'));
    assert.notEqual(out.session.status, 'suspended');
  });
});
