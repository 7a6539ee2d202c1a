/** What an agent's turn used, as its runtime reports it; summed per session and per subtree. */
export interface Usage {
  /** Input tokens, cache reads and writes included. */
  inputTokens?: number;
  outputTokens?: number;
  /** Of the input, read from the provider's prompt cache (gateway-metered calls). */
  cacheReadTokens?: number;
  /** Of the input, written to the provider's prompt cache (gateway-metered calls). */
  cacheWriteTokens?: number;
  costUsd?: number;
  turns?: number;
}
