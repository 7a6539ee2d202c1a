import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CONFIG_KEYS } from '../../src/config/keys.ts';
import { loadConfig } from '../../src/config/load.ts';
import { coordinatorConfig } from '../../src/plugins/coordinator/config.ts';
import { ENV_NAMES, withEnv } from '../../src/plugins/coordinator/env.ts';

/** Every variable of seed 003's configuration table that warren reads (the issue's list). */
const SEED_NAMES = [
  'ISSUER_URL',
  'AGENT_COORDINATOR_SCOPE',
  'OUTBOX_INTERVAL_MS',
  'OUTBOX_BATCH_SIZE',
  'OUTBOX_MAX_ATTEMPTS',
  'TTL_SWEEP_INTERVAL_MS',
  'DEADLINE_SWEEP_INTERVAL_MS',
  'RETENTION_CLEANUP_INTERVAL_MS',
  'DELEGATION_RETENTION_DAYS',
  'OUTBOX_RETENTION_DAYS',
  'JWKS_CACHE_MAX',
  'SHUTDOWN_GRACE_MS',
  'LOG_LEVEL',
];

describe('coordinator settings from the seed’s environment variables', () => {
  it('maps each name over the config file, and refuses a bad value', () => {
    const base = coordinatorConfig.parse({ outbox: { intervalMs: 1000, sinks: [] } });
    const c = withEnv(base, {
      OUTBOX_INTERVAL_MS: '250',
      OUTBOX_BATCH_SIZE: '20',
      OUTBOX_MAX_ATTEMPTS: '4',
      TTL_SWEEP_INTERVAL_MS: '1000',
      DEADLINE_SWEEP_INTERVAL_MS: '100',
      RETENTION_CLEANUP_INTERVAL_MS: '5000',
      DELEGATION_RETENTION_DAYS: '30',
      OUTBOX_RETENTION_DAYS: '1.5',
    });
    assert.equal(c.outbox.intervalMs, 250);
    assert.equal(c.outbox.batchSize, 20);
    assert.equal(c.outbox.maxAttempts, 4);
    assert.equal(c.ttlSweepIntervalMs, 1000);
    assert.equal(c.deadlineSweepIntervalMs, 100);
    assert.equal(c.retentionCleanupIntervalMs, 5000);
    assert.equal(c.delegationRetentionDays, 30);
    assert.equal(c.outboxRetentionDays, 1.5);
    assert.equal(base.outbox.intervalMs, 1000, 'the parsed config is not changed');
    assert.throws(() => withEnv(base, { OUTBOX_BATCH_SIZE: 'lots' }), /OUTBOX_BATCH_SIZE/);
  });
});

describe('every seed variable of the issue is read, and documented', () => {
  it('is a warren setting (config key) or a coordinator setting, and docs/configuration.md lists it', () => {
    const warrenEnv = new Set(CONFIG_KEYS.map((k) => k.env));
    const pluginEnv = new Set(Object.keys(ENV_NAMES));
    const docs = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const name of SEED_NAMES) {
      assert.ok(warrenEnv.has(name) !== pluginEnv.has(name), `${name} is read in exactly one place`);
      assert.ok(docs.includes(`\`${name}\``), `docs/configuration.md lists ${name}`);
    }
  });

  it('SHUTDOWN_GRACE_MS is the kernel’s shutdownGraceMs (default 15000, the seed’s)', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'warren-env-'));
    try {
      const dflt = loadConfig({ flags: {}, env: {}, cwd });
      assert.equal(dflt.options.kernel?.shutdownGraceMs, 15_000);
      const set = loadConfig({ flags: {}, env: { SHUTDOWN_GRACE_MS: '2500' }, cwd });
      assert.equal(set.options.kernel?.shutdownGraceMs, 2500);
      const flag = loadConfig({
        flags: { 'shutdown-grace-ms': '700' },
        env: { SHUTDOWN_GRACE_MS: '2500' },
        cwd,
      });
      assert.equal(flag.options.kernel?.shutdownGraceMs, 700, 'a flag wins over the environment');
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('seed 003’s PORT, DATABASE_URL, DB_POOL_MAX, REDIS_URL: aliases below warren’s own names', () => {
  const load = (env: Record<string, string>, flags: Record<string, string> = {}) => {
    const cwd = mkdtempSync(join(tmpdir(), 'warren-alias-'));
    try {
      return loadConfig({ flags, env, cwd });
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };
  const seed = { PORT: '8123', DATABASE_URL: 'postgres://db.internal/coord', DB_POOL_MAX: '20' };

  it('used when warren’s own names are unset (the coordinator plugin enabled: every plugin, by default)', () => {
    const c = load(seed);
    assert.deepEqual(
      [c.options.port, c.options.db, c.options.dbPoolMax],
      [8123, 'postgres://db.internal/coord', 20],
    );
    assert.equal(c.resolved.settings.get('server.port')!.origin, 'PORT (coordinator alias of WARREN_PORT)');
    const named = load({ ...seed, WARREN_PLUGINS: 'orchestration,coordinator' });
    assert.equal(named.options.port, 8123);
  });

  it('warren’s name wins: WARREN_*, a flag', () => {
    const c = load({
      ...seed,
      WARREN_PORT: '7001',
      WARREN_DB: '/tmp/mine.db',
      WARREN_DB_POOL_MAX: '4',
    });
    assert.deepEqual([c.options.port, c.options.db, c.options.dbPoolMax], [7001, '/tmp/mine.db', 4]);
    assert.equal(load(seed, { port: '7002' }).options.port, 7002);
  });

  it('ignored when the coordinator plugin is not enabled', () => {
    const c = load({ ...seed, WARREN_PLUGINS: 'orchestration,knowledge' });
    assert.deepEqual([c.options.port, c.options.db, c.options.dbPoolMax], [7700, undefined, 8]);
    assert.equal(c.resolved.settings.get('server.port')!.source, 'default');
  });

  it('a bad alias value is refused by its name', () => {
    assert.throws(() => load({ PORT: 'http' }), /PORT \(coordinator alias of WARREN_PORT\)="http"/);
    assert.doesNotThrow(() => load({ PORT: 'http', WARREN_PLUGINS: 'orchestration' }));
  });

  it('REDIS_URL is the outbox’s Redis sink unless the settings configure one', () => {
    const base = coordinatorConfig.parse({});
    const c = withEnv(base, { REDIS_URL: 'redis://127.0.0.1:6390' });
    assert.deepEqual(c.outbox.sinks, [{ type: 'redis', url: 'redis://127.0.0.1:6390' }]);
    const own = coordinatorConfig.parse({ outbox: { sinks: [{ type: 'redis', url: 'redis://own:6379' }] } });
    assert.deepEqual(withEnv(own, { REDIS_URL: 'redis://127.0.0.1:6390' }).outbox.sinks, own.outbox.sinks);
    assert.throws(() => withEnv(base, { REDIS_URL: 'not a url' }), /REDIS_URL/);
  });
});
