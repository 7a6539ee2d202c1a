import type { ExpressionBuilder, UpdateObject } from 'kysely';
import type { Database, SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { parseJson } from '../util/json.ts';
import type { Usage } from '../vocab/usage.ts';
import { enforceBudgets } from './breach.ts';
import { parseIds, SCOPE_COLUMNS, type ScopeRow, type SubtreeTotals } from './budget.ts';
import type { Core } from './core.ts';

/**
 * Usage summed up the tree, durably, in the transaction that records it. A session's own
 * usage is its `usage` JSON and `turns`; its subtree totals (own included) are columns a
 * report adds to in place. On the hot path of every turn, so: the session's own row takes
 * the increment in the statement it runs anyway, its ancestors (if it has any below init)
 * in one more, and only a session under a budget reads anything back.
 */

/** The largest amount one report may add to a total: an agent's report is untrusted. */
const MAX_PER_REPORT = 1e9;

/** What a runtime's report adds to the subtree totals: finite, non-negative, bounded. Turns are the kernel's count. */
export function subtreeDelta(u: Usage): SubtreeTotals {
  const n = (v: unknown, whole: boolean) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return 0;
    const x = Math.min(v, MAX_PER_REPORT);
    return whole ? Math.round(x) : x;
  };
  return {
    inputTokens: n(u.inputTokens, true),
    outputTokens: n(u.outputTokens, true),
    costUsd: n(u.costUsd, false),
    turns: 0,
  };
}

const isZero = (d: SubtreeTotals) =>
  d.inputTokens === 0 && d.outputTokens === 0 && d.costUsd === 0 && d.turns === 0;

/** The SET clause that adds `d` to a row's subtree totals (only the totals that change). */
export function addTotals(
  eb: ExpressionBuilder<Database, 'sessions'>,
  d: SubtreeTotals,
): UpdateObject<Database, 'sessions'> {
  const set: UpdateObject<Database, 'sessions'> = {};
  if (d.inputTokens) set.subtree_input_tokens = eb('subtree_input_tokens', '+', d.inputTokens);
  if (d.outputTokens) set.subtree_output_tokens = eb('subtree_output_tokens', '+', d.outputTokens);
  if (d.costUsd) set.subtree_cost_usd = eb('subtree_cost_usd', '+', d.costUsd);
  if (d.turns) set.subtree_turns = eb('subtree_turns', '+', d.turns);
  return set;
}

/** A runtime's usage report: added to the session's own usage and to its subtree's totals. */
export async function recordUsage(tx: WriteTx, core: Core, row: SessionsTable, u: Usage): Promise<void> {
  const sum: Record<string, number> = { ...parseJson<Record<string, number>>(row.usage, {}) };
  for (const [k, v] of Object.entries(u)) if (typeof v === 'number') sum[k] = (sum[k] ?? 0) + v;
  const d = subtreeDelta(u);
  // A fixed statement (tx.run: prepared, no query builder): every turn and every model call
  // the gateway meters runs it.
  await tx.run(OWN_USAGE_SQL, [
    JSON.stringify(sum),
    d.inputTokens,
    d.outputTokens,
    d.costUsd,
    d.turns,
    row.id,
  ]);
  await sumUp(tx, core, row, d);
}

const OWN_USAGE_SQL =
  'update sessions set usage = ?, subtree_input_tokens = subtree_input_tokens + ?, subtree_output_tokens = subtree_output_tokens + ?, subtree_cost_usd = subtree_cost_usd + ?, subtree_turns = subtree_turns + ? where id = ?';

/**
 * The rest of a report's way up, once the session's own row has its share: every ancestor's
 * totals, then the budgets that cover it.
 */
export async function sumUp(tx: WriteTx, core: Core, row: SessionsTable, d: SubtreeTotals): Promise<void> {
  if (isZero(d)) return;
  const ancestors = parseIds(row.ancestors);
  const scope = parseIds(row.budget_scope);
  // Only ancestors budget it (it would come first): the update hands back what the check reads.
  const returning = scope.length > 0 && scope[0] !== row.id;
  let seen: ScopeRow[] | undefined;
  if (ancestors.length > 0) {
    const q = tx.db
      .updateTable('sessions')
      .set((eb) => addTotals(eb, d))
      .where('id', 'in', ancestors);
    if (returning) seen = await q.returning(SCOPE_COLUMNS).execute();
    else await q.execute();
  }
  if (scope.length > 0) await enforceBudgets(tx, core, scope, row.id, seen);
}
