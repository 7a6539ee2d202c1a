/**
 * One configuration from three sources: real files in a real data dir, environment
 * variables and flags, with flags > environment > file > defaults, and errors that name the
 * file and key (or the variable or flag) and what was expected.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../src/config/errors.ts';
import { loadConfig } from '../../src/config/load.ts';
import { type ConfigInput, resolveConfig } from '../../src/config/resolve.ts';
import { Gate } from '../../src/syscalls/gate.ts';
import { syscallTable } from '../../src/syscalls/table.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A working directory with a data dir `.warren` holding the given files. */
function workdir(files: Record<string, string> = {}): string {
  const cwd = mkdtempSync(join(tmpdir(), 'warren-config-'));
  dirs.push(cwd);
  mkdirSync(join(cwd, '.warren'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(cwd, '.warren', name), text);
  return cwd;
}

const input = (cwd: string, over: Partial<ConfigInput> = {}): ConfigInput => ({
  flags: {},
  env: {},
  cwd,
  ...over,
});

const failsWith = (fn: () => unknown, ...parts: (string | RegExp)[]) =>
  assert.throws(fn, (e: Error) => {
    assert.ok(e instanceof ConfigError, `a ConfigError, got ${e.name}: ${e.message}`);
    for (const p of parts) {
      if (typeof p === 'string') assert.ok(e.message.includes(p), `"${p}" in: ${e.message}`);
      else assert.match(e.message, p);
    }
    return true;
  });

describe('configuration sources and precedence', () => {
  it('defaults when nothing is set', () => {
    const c = resolveConfig(input(workdir()));
    assert.equal(c.file, null);
    const depth = c.settings.get('limits.maxDepth')!;
    assert.deepEqual(depth, { value: 10, source: 'default', origin: null });
    assert.equal(c.settings.get('server.port')!.value, 7700);
  });

  it('MCP sessions: cap and expiry reach the HTTP surface from the file, the environment and flags', () => {
    assert.deepEqual(loadConfig(input(workdir())).options.mcp, { maxSessionsPerCaller: 32, idleMs: 60_000 });
    const cwd = workdir({ 'warren.config.yaml': 'mcp:\n  maxSessionsPerCaller: 5\n  idleMs: 2000\n' });
    assert.deepEqual(loadConfig(input(cwd)).options.mcp, { maxSessionsPerCaller: 5, idleMs: 2000 });
    const over = loadConfig(
      input(cwd, { env: { WARREN_MCP_IDLE_MS: '300' }, flags: { 'mcp-max-sessions-per-caller': '4' } }),
    );
    assert.deepEqual(over.options.mcp, { maxSessionsPerCaller: 4, idleMs: 300 });
    failsWith(() => loadConfig(input(cwd, { flags: { 'mcp-idle-ms': '50' } })), '--mcp-idle-ms "50"');
    failsWith(
      () => loadConfig(input(cwd, { env: { WARREN_MCP_MAX_SESSIONS_PER_CALLER: '0' } })),
      'WARREN_MCP_MAX_SESSIONS_PER_CALLER="0"',
    );
  });

  it('the gateway’s pacing and breaker from the file, the environment and flags', () => {
    const gw = (c: ReturnType<typeof loadConfig>) => {
      const { rpm, tpm, breakerFailures, breakerCoolMs } = c.options.kernel!.gateway!;
      return { rpm, tpm, breakerFailures, breakerCoolMs };
    };
    assert.deepEqual(gw(loadConfig(input(workdir()))), {
      rpm: 0,
      tpm: 0,
      breakerFailures: 5,
      breakerCoolMs: 30_000,
    });
    const cwd = workdir({ 'warren.config.yaml': 'gateway:\n  rpm: 50\n  breakerFailures: 3\n' });
    const over = loadConfig(
      input(cwd, {
        env: { WARREN_GATEWAY_TPM: '40000', WARREN_GATEWAY_BREAKER_FAILURES: '2' },
        flags: { 'gateway-breaker-cool-ms': '5000', 'gateway-rpm': '60' },
      }),
    );
    assert.deepEqual(gw(over), { rpm: 60, tpm: 40_000, breakerFailures: 2, breakerCoolMs: 5000 });
    failsWith(() => loadConfig(input(cwd, { env: { WARREN_GATEWAY_RPM: '-1' } })), 'WARREN_GATEWAY_RPM="-1"');
  });

  it('file < env < flag, key by key, each value with its source', () => {
    const cwd = workdir({
      'warren.config.yaml': [
        'limits:',
        '  maxDepth: 4',
        '  maxChildren: 3',
        '  maxSessionsPerZone: 7',
        'termGraceMs: 5000',
        'retentionDays: null',
      ].join('\n'),
    });
    const c = resolveConfig(
      input(cwd, {
        env: { WARREN_MAX_CHILDREN: '5', WARREN_MAX_SESSIONS_PER_ZONE: '8' },
        flags: { 'max-sessions-per-zone': '9' },
      }),
    );
    const file = join(cwd, '.warren', 'warren.config.yaml');
    assert.equal(c.file, file);
    assert.deepEqual(c.settings.get('limits.maxDepth'), {
      value: 4,
      source: 'file',
      origin: `${file}: limits.maxDepth`,
    });
    assert.deepEqual(c.settings.get('limits.maxChildren'), {
      value: 5,
      source: 'env',
      origin: 'WARREN_MAX_CHILDREN',
    });
    assert.deepEqual(c.settings.get('limits.maxSessionsPerZone'), {
      value: 9,
      source: 'flag',
      origin: '--max-sessions-per-zone',
    });
    assert.equal(c.settings.get('termGraceMs')!.value, 5000);
    assert.equal(c.settings.get('retentionDays')!.value, null, 'null in the file: never');
    assert.equal(c.settings.get('sessionRetentionDays')!.source, 'default');
  });

  it('reads JSON too, and the data dir from a flag or the environment', () => {
    const cwd = workdir();
    mkdirSync(join(cwd, 'elsewhere'));
    writeFileSync(join(cwd, 'elsewhere', 'warren.config.json'), JSON.stringify({ server: { port: 7801 } }));
    const byEnv = resolveConfig(input(cwd, { env: { WARREN_DATA_DIR: 'elsewhere' } }));
    assert.equal(byEnv.settings.get('server.port')!.value, 7801);
    assert.equal(byEnv.dataDir, join(cwd, 'elsewhere'));
    const byFlag = resolveConfig(
      input(cwd, { env: { WARREN_DATA_DIR: 'nowhere' }, flags: { 'data-dir': 'elsewhere' } }),
    );
    assert.equal(byFlag.settings.get('server.port')!.value, 7801);
    assert.equal(byFlag.settings.get('server.dataDir')!.source, 'flag');
  });

  it('--config (or WARREN_CONFIG) names a file outside the data dir; it must exist', () => {
    const cwd = workdir({ 'warren.config.json': '{"server":{"port":1}}' });
    writeFileSync(join(cwd, 'other.yml'), 'server:\n  port: 2\n');
    assert.equal(
      resolveConfig(input(cwd, { configFile: 'other.yml' })).settings.get('server.port')!.value,
      2,
    );
    assert.equal(
      resolveConfig(input(cwd, { env: { WARREN_CONFIG: 'other.yml' } })).settings.get('server.port')!.value,
      2,
    );
    failsWith(
      () => resolveConfig(input(cwd, { configFile: 'missing.yaml' })),
      'missing.yaml',
      'does not exist',
    );
  });

  it('lists, maps, never and none from text', () => {
    const c = resolveConfig(
      input(workdir(), {
        env: {
          WARREN_TIER_AGENT: 'ipc_spawn, ipc_write ,ipc_read',
          WARREN_MAX_SESSIONS_PER_RUNTIME: 'claude-code=5,codex=2',
          WARREN_RETENTION_DAYS: 'never',
          WARREN_DEFAULT_TTL_SECONDS: 'none',
          WARREN_HOST: '',
        },
        flags: { 'session-retention-days': '1.5' },
      }),
    );
    assert.deepEqual(c.settings.get('tiers.agent')!.value, ['ipc_spawn', 'ipc_write', 'ipc_read']);
    assert.deepEqual(c.settings.get('limits.maxSessionsPerRuntime')!.value, { 'claude-code': 5, codex: 2 });
    assert.equal(c.settings.get('retentionDays')!.value, null);
    assert.equal(c.settings.get('defaultTtlSeconds')!.value, null);
    assert.equal(c.settings.get('sessionRetentionDays')!.value, 1.5);
    assert.equal(c.settings.get('server.host')!.source, 'default', 'an empty variable is unset');
  });
});

describe('configuration errors', () => {
  it('a wrong type names the file, the key path and what was expected', () => {
    const cwd = workdir({ 'warren.config.yaml': 'limits:\n  maxDepth: deep\n' });
    failsWith(
      () => resolveConfig(input(cwd)),
      join(cwd, '.warren', 'warren.config.yaml'),
      'limits.maxDepth',
      'expected number',
    );
  });

  it('every bad key at once, each on its own line', () => {
    const cwd = workdir({
      'warren.config.json': JSON.stringify({ server: { port: 70000 }, termGraceMs: -1 }),
    });
    failsWith(() => resolveConfig(input(cwd)), /server\.port: .*65535/, /\n.*: termGraceMs/);
  });

  it('an unknown key is an error that lists the known ones', () => {
    const cwd = workdir({ 'warren.config.yaml': 'limits:\n  maxDepht: 4\n' });
    failsWith(() => resolveConfig(input(cwd)), 'limits.maxDepht: unknown key', 'maxDepth, maxChildren');
    const top = workdir({ 'warren.config.yaml': 'maxDepth: 4\n' });
    failsWith(() => resolveConfig(input(top)), 'maxDepth: unknown key', 'limits');
  });

  it('the data dir is not a file setting (the file is found through it)', () => {
    const cwd = workdir({ 'warren.config.yaml': 'server:\n  dataDir: /tmp\n' });
    failsWith(() => resolveConfig(input(cwd)), 'server.dataDir: unknown key');
  });

  it('files that do not parse, or that are not objects', () => {
    failsWith(
      () => resolveConfig(input(workdir({ 'warren.config.json': '{"limits": {' }))),
      'not valid JSON',
    );
    failsWith(() => resolveConfig(input(workdir({ 'warren.config.yml': 'limits: [1\n' }))), 'not valid YAML');
    failsWith(
      () => resolveConfig(input(workdir({ 'warren.config.yml': '- 1\n- 2\n' }))),
      'expected an object',
    );
  });

  it('two config files in one data dir: which one wins would be a guess', () => {
    const cwd = workdir({ 'warren.config.json': '{}', 'warren.config.yaml': '{}' });
    failsWith(() => resolveConfig(input(cwd)), 'more than one config file', 'keep one');
  });

  it('an empty file is no settings', () => {
    assert.equal(
      resolveConfig(input(workdir({ 'warren.config.yaml': '' }))).settings.get('server.port')!.value,
      7700,
    );
  });

  it('variables and flags are named with their text and the expected form', () => {
    const cwd = workdir();
    failsWith(
      () => resolveConfig(input(cwd, { env: { WARREN_PORT: 'http' } })),
      'WARREN_PORT="http"',
      'expected',
    );
    failsWith(() => resolveConfig(input(cwd, { flags: { 'max-depth': '0' } })), '--max-depth "0"', '>0');
    failsWith(
      () => resolveConfig(input(cwd, { flags: { durability: 'disk' } })),
      '--durability',
      'process|power',
    );
    failsWith(
      () => resolveConfig(input(cwd, { env: { WARREN_MAX_WAIT_MS: '90000' } })),
      'at most 55000',
      '60 s',
    );
    failsWith(
      () => resolveConfig(input(cwd, { flags: { 'node-id': 'a.b' } })),
      '--node-id',
      'letters, digits',
    );
    failsWith(
      () => resolveConfig(input(cwd, { flags: { 'max-sessions-per-runtime': 'codex' } })),
      '--max-sessions-per-runtime',
      'name=n',
    );
  });

  it('tier tools must be tools a session can call, named by where they were set', () => {
    const cwd = workdir({ 'warren.config.yaml': 'tiers:\n  worker: [ipc_read, ipc_spwan]\n' });
    failsWith(() => loadConfig(input(cwd)), 'tiers.worker', '"ipc_spwan" is not a tool', 'ipc_spawn');
    failsWith(
      () => loadConfig(input(workdir(), { env: { WARREN_TIER_AGENT: 'serve' } })),
      'WARREN_TIER_AGENT',
      '"serve"',
    );
  });
});

describe('what the server gets', () => {
  it('kernel settings, tiers and grants as Warren.open takes them', () => {
    const cwd = workdir({
      'warren.config.yaml': [
        'limits: { maxDepth: 4 }',
        'tiers:',
        '  agent: [ipc_spawn, ipc_write, ipc_read, ipc_close, ps]',
        'grants:',
        '  deny: ["p*"]',
        'defaultTtlSeconds: 3600',
      ].join('\n'),
    });
    const c = loadConfig(input(cwd, { flags: { 'node-id': 'node-a' } }));
    assert.equal(c.options.kernel?.nodeId, 'node-a');
    assert.equal(c.options.kernel?.limits?.maxDepth, 4);
    assert.equal(c.options.kernel?.defaultTtlSeconds, 3600);
    assert.deepEqual(
      c.tiers.agent,
      ['ipc_spawn', 'ipc_write', 'ipc_read', 'ipc_close'],
      'ps denied by the grant',
    );
    // Unset tiers leave sessions to their jobs; the default grants narrow every session's set.
    assert.equal(c.tiers.orchestrator, null);
    assert.deepEqual(c.options.gating?.grants, { deny: ['p*'] });
    const gate = new Gate(syscallTable(), c.options.gating);
    const orchestrator = gate.forSpawn({ depth: 1 }, null);
    assert.ok(
      !orchestrator.includes('ps') && orchestrator.includes('ipc_spawn'),
      'default grants narrow jobs',
    );
    assert.deepEqual(
      gate.forSpawn({ depth: 2 }, null),
      c.tiers.agent,
      'a set tier is the policy at its depth',
    );
    assert.equal(c.options.dataDir, join(cwd, '.warren'));
    assert.equal(c.db, join(cwd, '.warren', 'warren.db'));
    assert.equal(c.options.db, undefined, 'the default database is left to the store');
  });
});
