import { parseJson } from '../../util/json.ts';
import { OVER_BUDGET } from '../../vocab/gateway.ts';
import {
  type Breach,
  breachText,
  budgetOf,
  firstBreach,
  remainingOf,
  type ScopeRow,
  totalsOf,
} from '../budget.ts';

/**
 * Budgets before the call (docs/gateway.md): a model request is refused, not sent, when a
 * budget that covers its session is spent, or when the request alone would take it past:
 *
 * - spent: the budget's breach is recorded, or its subtree's totals have reached a limit
 *   (wall time included);
 * - would take past: the request's input, estimated at one token per 4 bytes of its body,
 *   is more than is left of `inputTokens`, or that estimate priced at the model's input price
 *   is more than is left of `costUsd`. Output is not estimated: the provider bounds it by the
 *   request's `max_tokens`, which Claude Code sets at tens of thousands whatever the turn
 *   needs, so holding it against what is left would refuse calls long before a budget is
 *   spent. A call's output is counted when it is answered, and the next call is refused.
 */

/** What a request is expected to use before it is sent. */
export interface CallEstimate {
  inputTokens: number;
  /** Null when the model has no price. */
  costUsd: number | null;
}

/** Why a request is refused: the budget, and the limit it has spent or would cross. */
export interface Refusal {
  budgetOf: string;
  spent: Breach & { estimated?: number };
  /** Already spent (true), or spent by this request were it sent (false). */
  already: boolean;
}

/** The input tokens a request body of this many bytes is taken to hold. */
export const estimateInputTokens = (bytes: number): number => Math.ceil(bytes / 4);

/** The first budget among `rows` (the live budgeted sessions covering the caller) that refuses the call. */
export function refusal(rows: readonly ScopeRow[], estimate: CallEstimate, now: number): Refusal | null {
  for (const b of rows) {
    const recorded = b.budget_breach !== null ? parseJson<Breach | null>(b.budget_breach, null) : null;
    const budget = budgetOf(b) ?? {};
    const totals = totalsOf(b);
    const createdAt = Number(b.created_at);
    const spent = recorded ?? firstBreach(budget, totals, createdAt, now);
    if (spent) return { budgetOf: b.id, spent, already: true };
    const left = remainingOf(budget, totals, createdAt, now);
    if (left.inputTokens !== undefined && estimate.inputTokens > left.inputTokens) {
      return wouldCross(b.id, 'inputTokens', budget.inputTokens!, totals.inputTokens, estimate.inputTokens);
    }
    if (left.costUsd !== undefined && estimate.costUsd !== null && estimate.costUsd > left.costUsd) {
      return wouldCross(b.id, 'costUsd', budget.costUsd!, totals.costUsd, estimate.costUsd);
    }
  }
  return null;
}

function wouldCross(
  id: string,
  limit: 'inputTokens' | 'costUsd',
  max: number,
  used: number,
  estimated: number,
): Refusal {
  return {
    budgetOf: id,
    spent: { limit, max, used, over: used + estimated - max, estimated },
    already: false,
  };
}

/** What the agent reads in the error: which budget, what is left, and that nothing was sent. */
export function refusalText(r: Refusal): string {
  return `${OVER_BUDGET} (session ${r.budgetOf}): ${breachText(r.spent)}. The request was not sent to the model.`;
}
