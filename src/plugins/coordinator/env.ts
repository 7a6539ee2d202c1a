import { WarrenError } from '../../vocab/errors.ts';
import { type CoordinatorConfig, sinkConfig } from './config.ts';

/**
 * The seed's environment variables, over the config file's `plugins.coordinator` (the
 * environment wins, as everywhere in warren). ISSUER_URL, AGENT_COORDINATOR_SCOPE and
 * JWKS_CACHE_MAX are warren's own settings (auth.*); LOG_LEVEL is log.level;
 * SHUTDOWN_GRACE_MS is shutdownGraceMs (src/config/keys.ts); PORT, DATABASE_URL and DB_POOL_MAX
 * are aliases of server settings (src/config/aliases.ts). REDIS_URL is read below: a Redis sink
 * when the settings configure none.
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
  return withRedisUrl(out, env.REDIS_URL);
}

/**
 * Seed 003's REDIS_URL: the outbox's Redis sink. Below warren's own setting, as every alias:
 * a Redis sink in `plugins.settings.coordinator.outbox.sinks` wins, and REDIS_URL is ignored.
 */
function withRedisUrl(cfg: CoordinatorConfig, url: string | undefined): CoordinatorConfig {
  if (url === undefined || url === '' || cfg.outbox.sinks.some((s) => s.type === 'redis')) return cfg;
  const sink = sinkConfig.safeParse({ type: 'redis', url });
  if (!sink.success)
    throw new WarrenError('invalid_input', `REDIS_URL must be a URL (redis://…), not ${JSON.stringify(url)}`);
  return { ...cfg, outbox: { ...cfg.outbox, sinks: [...cfg.outbox.sinks, sink.data] } };
}
