import type { Usage as U } from '../lib/types.ts';

const tokens = (n: number) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);

/** Subtree tokens and cost on one line that never wraps into the next row; the full numbers on hover. */
export function Usage({ u }: { u: U | undefined }) {
  const tok = (u?.inputTokens ?? 0) + (u?.outputTokens ?? 0);
  const full = `${u?.inputTokens ?? 0} in · ${u?.outputTokens ?? 0} out tokens · $${(u?.costUsd ?? 0).toFixed(4)} · ${u?.turns ?? 0} turns (this and everything below it)`;
  return (
    <span className="usage" title={full} data-usage>
      {tokens(tok)} tok · ${(u?.costUsd ?? 0).toFixed(2)}
    </span>
  );
}
