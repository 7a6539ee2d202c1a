/**
 * What model tokens cost, per model, in USD per million tokens: the gateway prices each
 * request from the provider's own usage with it (docs/gateway.md). A key is a model id, or a
 * prefix ending in `*`; the longest match wins. Cache reads and writes default to the
 * provider's usual multiples of the input price (0.1× and 1.25×).
 */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** Tokens of one model request, as the provider counted them. */
export interface ModelUsage {
  /** Input tokens outside the cache. */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/**
 * Anthropic's and OpenAI's list prices when this was written (an operator's `gateway.prices`
 * replaces any entry): newer Opus models are cheaper than Opus 4.0 and 4.1, so those are
 * named apart. OpenAI names each GPT-5 point release on its own (`gpt-5*` would price a later
 * one as the first); its cached input costs 0.1× (GPT-5), 0.25× (GPT-4.1, o3, o4-mini) or
 * 0.5× (GPT-4o) the input price, and it has no cache writes.
 */
export const DEFAULT_PRICES: PriceTable = {
  'claude-opus-4*': { input: 5, output: 25 },
  'claude-opus-4-0*': { input: 15, output: 75 },
  'claude-opus-4-1*': { input: 15, output: 75 },
  'claude-opus-4-2025*': { input: 15, output: 75 },
  'claude-3-opus*': { input: 15, output: 75 },
  'claude-sonnet-4*': { input: 3, output: 15 },
  'claude-3-7-sonnet*': { input: 3, output: 15 },
  'claude-3-5-sonnet*': { input: 3, output: 15 },
  'claude-haiku-4*': { input: 1, output: 5 },
  'claude-3-5-haiku*': { input: 0.8, output: 4 },
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-*': { input: 1.25, output: 10 },
  'gpt-5-mini*': { input: 0.25, output: 2 },
  'gpt-5-nano*': { input: 0.05, output: 0.4 },
  'gpt-5.1': { input: 1.25, output: 10 },
  'gpt-5.1-*': { input: 1.25, output: 10 },
  'gpt-5.1-codex-mini*': { input: 0.25, output: 2 },
  'gpt-4.1*': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini*': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano*': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  'gpt-4o*': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini*': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  o3: { input: 2, output: 8, cacheRead: 0.5 },
  'o3-2*': { input: 2, output: 8, cacheRead: 0.5 },
  'o4-mini*': { input: 1.1, output: 4.4, cacheRead: 0.275 },
};

/** The price of a model: its own entry, else the longest `prefix*` that matches; null if none. */
export function priceOf(table: PriceTable, model: string): ModelPrice | null {
  const exact = table[model];
  if (exact) return exact;
  let best: ModelPrice | null = null;
  let bestLength = -1;
  for (const [key, price] of Object.entries(table)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (prefix.length > bestLength && model.startsWith(prefix)) {
      best = price;
      bestLength = prefix.length;
    }
  }
  return best;
}

/** What one request cost, or null when the model has no price. */
export function costOf(price: ModelPrice | null, u: ModelUsage): number | null {
  if (!price) return null;
  const cacheRead = price.cacheRead ?? price.input * 0.1;
  const cacheWrite = price.cacheWrite ?? price.input * 1.25;
  return (
    (u.inputTokens * price.input +
      u.outputTokens * price.output +
      u.cacheReadTokens * cacheRead +
      u.cacheWriteTokens * cacheWrite) /
    1e6
  );
}
