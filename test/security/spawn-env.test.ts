import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { SESSION_ENV_ALLOW } from '../../src/kernel/spawn-env.ts';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';

/**
 * Issue 25's attack: a session allowed to run one Python script passed `PYTHONUSERBASE` and its
 * `usercustomize.py` ran, and the other hooks a blocklist forgot were accepted too. A
 * session's child environment is now built from an allowlist; and the server's own
 * environment reaches no agent beyond one.
 */

const scratch = mkdtempSync(join(tmpdir(), 'warren-env-'));
const servers: ServerProcess[] = [];
after(async () => {
  await Promise.allSettled(servers.map((s) => s.crash()));
  rmSync(scratch, { recursive: true, force: true });
});

const python = realpathSync(
  execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim(),
);
const bash = realpathSync('/bin/bash');
const perl = realpathSync('/usr/bin/perl');
const node = realpathSync(process.execPath);

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function agent(h: HttpWarren, body: Record<string, unknown> = {}): Promise<string> {
  const r = await h.api('POST', '/v1/sessions', { script: idleScript, ...body });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  await waitStatus(h.warren, r.json.session.id, 'idle');
  return r.json.session.id;
}

/** A user base whose `usercustomize.py` touches `marker` when Python starts. */
function userBase(marker: string): string {
  const base = mkdtempSync(join(scratch, 'userbase-'));
  const site = execFileSync(python, ['-c', 'import site; print(site.getusersitepackages())'], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONUSERBASE: base },
  }).trim();
  mkdirSync(site, { recursive: true });
  writeFileSync(join(site, 'usercustomize.py'), `open(${JSON.stringify(marker)}, 'w').write('ran')\n`);
  return base;
}

forEachWarren(
  'spawn environments',
  (t) => {
    it('the attack is real: PYTHONUSERBASE runs usercustomize.py inside an allowed python (an operator may)', async () => {
      const h = await startHttp(t);
      const marker = join(scratch, 'operator-ran');
      const r = await h.api('POST', '/v1/sessions', {
        runtime: 'command',
        command: [python, '-c', 'pass'],
        env: { PYTHONUSERBASE: userBase(marker) },
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      await until('usercustomize.py to run', () => existsSync(marker));
    });

    it('a session granted python, bash and perl cannot pass any of the hooks a blocklist missed', async () => {
      const h = await startHttp(t);
      const a = await agent(h, {
        grants: { runtimes: ['script', 'command'], executables: [python, bash, perl, node] },
      });
      const marker = join(scratch, 'session-ran');
      const attacks: Array<[string[], Record<string, string>]> = [
        [[python, '-c', 'pass'], { PYTHONUSERBASE: userBase(marker) }],
        [[bash, '-c', 'echo hi'], { 'BASH_FUNC_echo%%': `() { touch ${marker}; }` }],
        [[bash, '-c', 'true'], { SHELLOPTS: 'xtrace', PS4: `$(touch ${marker})` }],
        [[perl, '-e', '1'], { PERLLIB: scratch }],
        [[bash, '-c', 'true'], { GCONV_PATH: scratch }],
        [[bash, '-c', 'true'], { GLIBC_TUNABLES: 'glibc.malloc.check=3' }],
        [[node, '-e', '0'], { NODE_OPTIONS: `--require ${join(scratch, 'x.js')}` }],
        [[node, '-e', '0'], { LD_PRELOAD: join(scratch, 'x.so') }],
        [[node, '-e', '0'], { PATH: scratch }],
        // A credential-looking name is allowed, but not under the loader's prefix.
        [[node, '-e', '0'], { LD_AUDIT_TOKEN: 'x' }],
      ];
      for (const [command, env] of attacks) {
        const r = await h.api(
          'POST',
          '/v1/sessions',
          { runtime: 'command', command, env },
          { auth: h.tokenOf(a) },
        );
        assert.equal(r.status, 403, `${Object.keys(env)}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error.code, 'forbidden');
        assert.equal(r.json.error.details.grant, 'env');
        assert.ok(Object.keys(env).includes(r.json.error.details.wanted), JSON.stringify(r.json));
        // The error says what is allowed.
        assert.match(r.json.error.message, /AGENT_\*/);
        assert.match(r.json.error.message, /grants\.env/);
        // The same name through a secret is refused alike.
        const viaSecret = await h.api(
          'POST',
          '/v1/sessions',
          { runtime: 'command', command, secretEnv: { [Object.keys(env)[0]!]: 'nope' } },
          { auth: h.tokenOf(a) },
        );
        // (403, or 400 where secretEnv's schema refuses the name outright)
        assert.ok([400, 403].includes(viaSecret.status), JSON.stringify(viaSecret.json));
      }
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(existsSync(marker), false, 'a hook ran');
      const children = await h.api('GET', `/v1/sessions?all=true`);
      assert.deepEqual(
        children.json.sessions.filter((s: { parentId?: string }) => s.parentId === a),
        [],
        'nothing was spawned',
      );
    });

    it('allowed names reach the child: AGENT_*, credentials, and the operator’s grants.env', async () => {
      const h = await startHttp(t, { kernel: { envAllow: ['MYAPP_*'] } });
      const a = await agent(h, { grants: { runtimes: ['script', 'command'], executables: [node] } });
      const out = join(scratch, 'env.json');
      const r = await h.api(
        'POST',
        '/v1/sessions',
        {
          runtime: 'command',
          command: [
            node,
            '-e',
            `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.env))`,
          ],
          env: {
            AGENT_ROLE: 'reviewer',
            GITHUB_TOKEN: 'ghp_x',
            MYAPP_MODE: 'fast',
            OPENAI_BASE_URL: 'http://x',
          },
        },
        { auth: h.tokenOf(a) },
      );
      assert.equal(r.status, 200, JSON.stringify(r.json));
      await until('the child to write its environment', () => existsSync(out));
      await until('the file to be whole', () => readFileSync(out, 'utf8').endsWith('}'));
      const env = JSON.parse(readFileSync(out, 'utf8')) as Record<string, string>;
      assert.equal(env.AGENT_ROLE, 'reviewer');
      assert.equal(env.MYAPP_MODE, 'fast');
      assert.equal(env.GITHUB_TOKEN, 'ghp_x');
      // Without the operator's extra name, it is refused.
      const plain = await startHttp(t);
      const b = await agent(plain, { grants: { runtimes: ['script', 'command'], executables: [node] } });
      const refused = await plain.api(
        'POST',
        '/v1/sessions',
        { runtime: 'command', command: [node, '-e', '0'], env: { MYAPP_MODE: 'fast' } },
        { auth: plain.tokenOf(b) },
      );
      assert.equal(refused.status, 403, JSON.stringify(refused.json));
    });
  },
  ['sqlite'],
);

it('an agent inherits none of the server’s environment beyond the allowlist (no WARREN_* secrets, no data dir)', async () => {
  const dataDir = mkdtempSync(join(scratch, 'data-'));
  const out = join(scratch, 'agent-env.json');
  const s = await startServer({
    dataDir,
    env: {
      WARREN_API_KEY: 'wk-leak',
      WARREN_RUNNER_TOKEN: 'rt-leak',
      WARREN_DATA_DIR: dataDir,
      AWS_SECRET_ACCESS_KEY: 'aws-leak',
      ANTHROPIC_API_KEY: 'sk-leak',
      PYTHONUSERBASE: '/tmp/leak',
    },
  });
  servers.push(s);
  const r = await s.api('POST', '/v1/sessions', {
    runtime: 'command',
    command: [node, '-e', `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.env))`],
  });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  await until(
    'the agent to write its environment',
    () => existsSync(out) && readFileSync(out, 'utf8').endsWith('}'),
  );
  const env = JSON.parse(readFileSync(out, 'utf8')) as Record<string, string>;
  const server = new Set([
    'PATH',
    'HOME',
    'USER',
    'LOGNAME',
    'SHELL',
    'TERM',
    'LANG',
    'LANGUAGE',
    'TZ',
    'TMPDIR',
  ]);
  // PWD: the agent's own working directory, set by the shell that starts it.
  const warrens = new Set([
    'PWD',
    'WARREN_SESSION_ID',
    'WARREN_TOKEN',
    'WARREN_URL',
    'WARREN_MCP_URL',
    'WARREN_AGENT_MARK',
  ]);
  const extra = Object.keys(env).filter((k) => !server.has(k) && !warrens.has(k) && !/^LC_/.test(k));
  assert.deepEqual(extra, [], `variables beyond the allowlist: ${extra.join(', ')}`);
  for (const [k, v] of Object.entries(env)) {
    assert.ok(!v.includes('leak'), `${k} carries a server secret`);
    assert.ok(!v.includes(realpathSync(dataDir)) && !v.includes(dataDir), `${k} names the data dir`);
  }
  assert.ok(SESSION_ENV_ALLOW.length > 0);
  await s.stop();
});
