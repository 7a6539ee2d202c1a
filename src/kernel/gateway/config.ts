import { defaultLimiterConfig, type LimiterConfig } from './limiter.ts';
import type { PriceTable } from './prices.ts';

/** The gateway's settings (`gateway.*` in the configuration; docs/gateway.md). */
export interface GatewayConfig extends LimiterConfig {
  /** claude-code sessions reach their model through the gateway (default on). */
  enabled: boolean;
  /** Prices per model, USD per million tokens, over the built-in table. */
  prices: PriceTable;
}

export const defaultGatewayConfig = (): GatewayConfig => ({
  enabled: true,
  prices: {},
  ...defaultLimiterConfig(),
});
