/** What an agent's turn used, as its runtime reports it; summed per session and per subtree. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  turns?: number;
}
