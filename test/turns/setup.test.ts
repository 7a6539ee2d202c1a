import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { adapterEnv, COORDINATOR_PRESET } from '../../src/plugins/turns/preset.ts';
import { binEnv, WARREN_BIN } from '../helpers/server.ts';

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_') && !k.startsWith('SKC_')),
);

const warren = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      process.execPath,
      [WARREN_BIN, ...args],
      { env: { ...cleanEnv, ...binEnv(), ...env }, timeout: 40_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });

describe('coordinator adapters: mcp-serve --check, setup hermes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-setup-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('mcp-serve coordinator|hermes --check --json: ok, the server name, every preset tool; a bad class is an error', async () => {
    for (const name of ['coordinator', 'hermes']) {
      const r = await warren(['mcp-serve', name, '--check', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual([out.ok, out.server], [true, 'warren-coordinator']);
      assert.deepEqual(
        out.tools,
        COORDINATOR_PRESET.map((t) => t.name),
      );
      assert.ok(out.tools.includes('skc_delegate_team'));
    }
    const bad = await warren(['mcp-serve', 'coordinator', '--check'], {
      SKC_COORDINATOR_MCP_MUTATIONS: 'everything',
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown mutation class "everything"/);
  });

  it('setup hermes renders and writes nothing; --install writes the profile config; --smoke checks the contract', async () => {
    const profile = join(dir, 'profile');
    const args = [
      'setup',
      'hermes',
      '--root',
      dir,
      '--root',
      join(dir, 'wt'),
      '--profile',
      'bot',
      '--repo',
      'app',
    ];
    const render = await warren([...args, '--mutation', 'sessions,reports', '--worktree-name', 'hermes-app']);
    assert.equal(render.code, 0, render.stderr);
    const env = JSON.parse(render.stdout).mcp_servers['warren-coordinator'].env;
    assert.deepEqual(env, {
      SKC_COORDINATOR_MCP_WORKDIR_ROOTS: [dir, join(dir, 'wt')].join(delimiter),
      SKC_COORDINATOR_MCP_SESSION_COMMAND: 'warren --worktree hermes-app',
      SKC_COORDINATOR_MCP_MUTATIONS: 'sessions,reports',
      SKC_COORDINATOR_MCP_PROFILE: 'bot',
      SKC_COORDINATOR_MCP_REPO: 'app',
    });
    assert.equal(existsSync(profile), false);
    const inst = await warren([...args, '--profile-dir', profile, '--install', '--smoke', '--json']);
    assert.equal(inst.code, 0, inst.stderr);
    const out = JSON.parse(inst.stdout);
    assert.deepEqual(readdirSync(profile), ['warren-coordinator.mcp.json']);
    assert.equal(statSync(out.installed).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(out.installed, 'utf8')).mcp_servers['warren-coordinator'].env, {
      SKC_COORDINATOR_MCP_WORKDIR_ROOTS: [dir, join(dir, 'wt')].join(delimiter),
      // Seed 004's default form (`skc --worktree`), under warren's name; no WORKTREE variable.
      SKC_COORDINATOR_MCP_SESSION_COMMAND: 'warren --worktree',
      SKC_COORDINATOR_MCP_PROFILE: 'bot',
      SKC_COORDINATOR_MCP_REPO: 'app',
    });
    assert.deepEqual(
      [out.smoke.ok, out.smoke.server, out.smoke.tools.length],
      [true, 'warren-coordinator', COORDINATOR_PRESET.length],
    );
    const noRoot = await warren(['setup', 'hermes']);
    assert.equal(noRoot.code, 2);
    const noDir = await warren([...args, '--install']);
    assert.match(noDir.stderr, /--install needs --profile-dir/);
  });
});

describe("SESSION_COMMAND in seed 004's form: `skc --worktree [name]`", () => {
  const env = (vars: Record<string, string>) =>
    adapterEnv(Object.fromEntries(Object.entries(vars).map(([k, v]) => [`SKC_COORDINATOR_MCP_${k}`, v])));

  it('`skc --worktree` (or warren) means a worktree per session, auto-named or named; no program', () => {
    for (const launcher of ['skc', 'warren', '/usr/local/bin/skc']) {
      const auto = env({ SESSION_COMMAND: `${launcher} --worktree` });
      assert.deepEqual([auto.worktree, auto.sessionCommand], [true, undefined]);
      const named = env({ SESSION_COMMAND: `${launcher} --worktree hermes-app` });
      assert.deepEqual([named.worktree, named.sessionCommand], ['hermes-app', undefined]);
    }
    assert.deepEqual([env({ SESSION_COMMAND: 'skc' }).worktree, env({}).worktree], [undefined, undefined]);
  });

  it('WORKTREE wins over the command; any other command is the program of command sessions', () => {
    const both = env({ SESSION_COMMAND: 'skc --worktree a', WORKTREE: 'b' });
    assert.equal(both.worktree, 'b');
    assert.equal(env({ SESSION_COMMAND: 'skc --worktree a', WORKTREE: 'off' }).worktree, undefined);
    const program = env({ SESSION_COMMAND: 'python3 agent.py --fast' });
    assert.deepEqual([program.sessionCommand, program.worktree], ['python3 agent.py --fast', undefined]);
  });

  it('a launcher flag warren cannot honour is refused, not dropped', () => {
    assert.throws(
      () => env({ SESSION_COMMAND: 'skc --worktree x --model gpt' }),
      /nothing more \(not --model gpt\)/,
    );
    assert.throws(() => env({ SESSION_COMMAND: 'skc --worktree --model gpt' }), /not --model gpt/);
    assert.throws(() => env({ SESSION_COMMAND: 'skc --worktree bad/name' }), /WORKTREE must be/);
  });

  it('mcp-serve coordinator --check starts with what setup hermes renders', async () => {
    const r = await warren(['mcp-serve', 'coordinator', '--check', '--json'], {
      SKC_COORDINATOR_MCP_SESSION_COMMAND: 'skc --worktree',
    });
    assert.equal(r.code, 0, r.stderr);
    const bad = await warren(['mcp-serve', 'coordinator', '--check'], {
      SKC_COORDINATOR_MCP_SESSION_COMMAND: 'skc --model x',
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /SESSION_COMMAND/);
  });
});
