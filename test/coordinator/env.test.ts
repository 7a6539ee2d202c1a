import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coordinatorConfig } from '../../src/plugins/coordinator/config.ts';
import { withEnv } from '../../src/plugins/coordinator/env.ts';

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
