import { WarrenError } from '../../vocab/errors.ts';
import type { CoordinatorConfig } from './config.ts';

/**
 * The seed's environment variables, over the config file's `plugins.coordinator` (the
 * environment wins, as everywhere in warren). ISSUER_URL, AGENT_COORDINATOR_SCOPE and
 * JWKS_CACHE_MAX are warren's own settings (auth.*); LOG_LEVEL is log.level;
 * SHUTDOWN_GRACE_MS is shutdownGraceMs (src/config/keys.ts).
 */
export const ENV_NAMES = {
  OUTBOX_INTERVAL_MS: 'outbox.intervalMs',
  OUTBOX_BATCH_SIZE: 'outbox.batchSize',
  OUTBOX_MAX_ATTEMPTS: 'outbox.maxAttempts',
  TTL_SWEEP_INTERVAL_MS: 'ttlSweepIntervalMs',
  DEADLINE_SWEEP_INTERVAL_MS: 'deadlineSweepIntervalMs',
  RETENTION_CLEANUP_INTERVAL_MS: 'retentionCleanupIntervalMs',
  DELEGATION_RETENTION_DAYS: 'delegationRetentionDays',
  OUTBOX_RETENTION_DAYS: 'outboxRetentionDays',
} as const;

export function withEnv(cfg: CoordinatorConfig, env: NodeJS.ProcessEnv): CoordinatorConfig {
  const out: CoordinatorConfig = { ...cfg, outbox: { ...cfg.outbox }, limits: { ...cfg.limits } };
  for (const [name, path] of Object.entries(ENV_NAMES)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0)
      throw new WarrenError('invalid_input', `${name} must be a positive number, not ${JSON.stringify(raw)}`);
    const value = path.endsWith('Days') ? n : Math.round(n);
    if (path.startsWith('outbox.')) {
      (out.outbox as Record<string, unknown>)[path.slice('outbox.'.length)] = value;
    } else (out as unknown as Record<string, unknown>)[path] = value;
  }
  return out;
}
