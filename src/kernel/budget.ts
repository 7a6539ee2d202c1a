import type { EndReason, SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { parseJson } from '../util/json.ts';
import { invalid, WarrenError } from '../vocab/errors.ts';
import type { Budget } from './types.ts';

/**
 * What a budget is: limits on a whole subtree's input and output tokens, cost, turns (as
 * the kernel counts them) and wall time from the budgeted session's spawn. A subtree has
 * spent a limit when its total reaches it. See docs/budgets.md.
 */

/** The budget columns of a session with no budget and no usage yet. */
export const NO_BUDGET = {
  budget: null,
  ancestors: null,
  budget_scope: null,
  budget_deadline: null,
  budget_breach: null,
  subtree_input_tokens: 0,
  subtree_output_tokens: 0,
  subtree_cost_usd: 0,
  subtree_turns: 0,
} as const;

export type BudgetLimit = keyof Budget;
export const BUDGET_LIMITS: readonly BudgetLimit[] = [
  'inputTokens',
  'outputTokens',
  'costUsd',
  'turns',
  'wallMs',
];

/** The largest value each limit takes: a budget is a number from a caller, bounded like any other. */
export const BUDGET_MAX: Readonly<Record<BudgetLimit, number>> = {
  inputTokens: 1e12,
  outputTokens: 1e12,
  costUsd: 1e6,
  turns: 1e9,
  wallMs: 366 * 86_400_000,
};

const INTEGER: ReadonlySet<BudgetLimit> = new Set(['inputTokens', 'outputTokens', 'turns', 'wallMs']);

/** The usage a subtree's budgets are held against (wall time is measured, not summed). */
export interface SubtreeTotals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  turns: number;
}

/** A limit that was spent: which, its value, what was used, and by how much that is over. */
export interface Breach {
  limit: BudgetLimit;
  max: number;
  used: number;
  over: number;
}

/** A budget from a request, checked: only known limits, each a non-negative number within bounds. */
export function validBudget(b: unknown): Budget {
  if (b === null || typeof b !== 'object' || Array.isArray(b))
    throw invalid('a budget is an object of limits');
  const out: Budget = {};
  for (const [k, v] of Object.entries(b)) {
    if (v === undefined) continue;
    if (!(BUDGET_LIMITS as readonly string[]).includes(k)) {
      throw invalid(`budget: unknown limit ${JSON.stringify(k)}; known: ${BUDGET_LIMITS.join(', ')}`);
    }
    const limit = k as BudgetLimit;
    const max = BUDGET_MAX[limit];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > max) {
      throw invalid(`budget.${limit} must be a number from 0 to ${max}`, { limit });
    }
    if (INTEGER.has(limit) && !Number.isInteger(v)) throw invalid(`budget.${limit} must be a whole number`);
    out[limit] = v;
  }
  return out;
}

export const budgetOf = (r: Pick<SessionsTable, 'budget'>): Budget | null =>
  parseJson<Budget | null>(r.budget, null);

export const totalsOf = (
  r: Pick<
    SessionsTable,
    'subtree_input_tokens' | 'subtree_output_tokens' | 'subtree_cost_usd' | 'subtree_turns'
  >,
): SubtreeTotals => ({
  inputTokens: Number(r.subtree_input_tokens ?? 0),
  outputTokens: Number(r.subtree_output_tokens ?? 0),
  costUsd: Number(r.subtree_cost_usd ?? 0),
  turns: Number(r.subtree_turns ?? 0),
});

/** What a limit has used: a subtree total, or for wall time the time since spawn. */
const usedOf = (limit: BudgetLimit, t: SubtreeTotals, createdAt: number, now: number): number =>
  limit === 'wallMs' ? now - createdAt : t[limit];

/** What is left of each limit of a budget (never below 0). */
export function remainingOf(budget: Budget, t: SubtreeTotals, createdAt: number, now: number): Budget {
  const out: Budget = {};
  for (const limit of BUDGET_LIMITS) {
    const max = budget[limit];
    if (max !== undefined) out[limit] = Math.max(0, max - usedOf(limit, t, createdAt, now));
  }
  return out;
}

/** The first limit the subtree has spent, if any. Wall time only when `now` is given (its own check). */
export function firstBreach(
  budget: Budget,
  t: SubtreeTotals,
  createdAt: number,
  now: number | null,
): Breach | null {
  for (const limit of BUDGET_LIMITS) {
    const max = budget[limit];
    if (max === undefined || (limit === 'wallMs' && now === null)) continue;
    const used = usedOf(limit, t, createdAt, now ?? 0);
    if (used >= max) return { limit, max, used, over: used - max };
  }
  return null;
}

export const parseIds = (text: string | null): string[] => parseJson<string[]>(text, []);

export type ScopeRow = Pick<
  SessionsTable,
  | 'id'
  | 'status'
  | 'budget'
  | 'budget_breach'
  | 'created_at'
  | 'subtree_input_tokens'
  | 'subtree_output_tokens'
  | 'subtree_cost_usd'
  | 'subtree_turns'
>;

/** What a breach check reads of a budgeted session. */
export const SCOPE_COLUMNS = [
  'id',
  'status',
  'budget',
  'budget_breach',
  'created_at',
  'subtree_input_tokens',
  'subtree_output_tokens',
  'subtree_cost_usd',
  'subtree_turns',
] as const;

/** The live budgeted sessions among these ids, with what each has used. */
export function scopeRows(tx: WriteTx, ids: string[]): Promise<ScopeRow[]> {
  return tx.db
    .selectFrom('sessions')
    .select(SCOPE_COLUMNS)
    .where('id', 'in', ids)
    .where('status', '!=', 'stopped')
    .execute();
}

export interface ChildBudget {
  /** The budget granted to the child (null: none of its own). */
  budget: Budget | null;
  /** The budgeted sessions that cover the child: itself first if budgeted, then its parent's scope. */
  scope: string[];
  /** Its wall-time deadline, when its own budget has one. */
  deadline: number | null;
}

/**
 * A child's budget, capped by what is left of every budget that covers its parent: asking for
 * more than is left of a limit, or spawning under a budget that is already spent, is
 * `over_budget`. A child that asks for none is still covered by them (their subtree totals
 * include it).
 */
export async function childBudget(
  tx: WriteTx,
  parent: Pick<SessionsTable, 'budget_scope'>,
  asked: Budget | undefined,
  childId: string,
): Promise<ChildBudget> {
  const own = asked === undefined ? null : validBudget(asked);
  const parentScope = parseIds(parent.budget_scope);
  for (const b of parentScope.length > 0 ? await scopeRows(tx, parentScope) : []) {
    const budget = budgetOf(b) ?? {};
    const createdAt = Number(b.created_at);
    const breach = b.budget_breach !== null ? parseJson<Breach | null>(b.budget_breach, null) : null;
    const spent = breach ?? firstBreach(budget, totalsOf(b), createdAt, tx.now);
    if (spent) {
      throw new WarrenError(
        'over_budget',
        `the budget of ${b.id} is spent (${spent.limit}: used ${round(spent.used)} of ${spent.max}); nothing can be spawned under it`,
        { budgetOf: b.id, limit: spent.limit, max: spent.max, used: spent.used, left: 0 },
      );
    }
    const left = remainingOf(budget, totalsOf(b), createdAt, tx.now);
    for (const limit of BUDGET_LIMITS) {
      const want = own?.[limit];
      const have = left[limit];
      if (want !== undefined && have !== undefined && want > have) {
        throw new WarrenError(
          'over_budget',
          `budget.${limit} ${want} is more than is left of the budget of ${b.id} (${round(have)})`,
          { budgetOf: b.id, limit, asked: want, left: have },
        );
      }
    }
  }
  const hasOwn = own !== null && Object.keys(own).length > 0;
  return {
    budget: hasOwn ? own : null,
    scope: hasOwn ? [childId, ...parentScope] : parentScope,
    deadline: hasOwn && own.wallMs !== undefined ? tx.now + own.wallMs : null,
  };
}

const round = (n: number) => Number(n.toFixed(6));

/** How a session that stopped after its SIGTERM ends: terminated, or `budget_exceeded` if a budget sent it. */
export function endAfterTerm(row: Pick<SessionsTable, 'budget_breach'>): {
  reason: EndReason;
  detail: Record<string, unknown>;
} {
  const breach = parseJson<Breach | null>(row.budget_breach, null);
  return breach ? { reason: 'budget_exceeded', detail: { ...breach } } : { reason: 'terminated', detail: {} };
}

const LABEL: Record<BudgetLimit, string> = {
  inputTokens: 'input tokens',
  outputTokens: 'output tokens',
  costUsd: 'cost (USD)',
  turns: 'turns',
  wallMs: 'wall time (ms)',
};

const num = (n: number) => String(Number(n.toFixed(6)));

/**
 * "the subtree's input tokens budget is spent: 1200 used of 1000"; for a model request the
 * gateway refused before it was spent (`estimated`: what the request would have used), "…
 * would be passed by a model request of about 6905: 0 used of 1000".
 */
export function breachText(b: Pick<Breach, 'limit' | 'max' | 'used'> & { estimated?: number }): string {
  if (b.estimated !== undefined)
    return `the subtree's ${LABEL[b.limit] ?? b.limit} budget would be passed by a model request of about ${num(b.estimated)}: ${num(b.used)} used of ${num(b.max)}`;
  return `the subtree's ${LABEL[b.limit] ?? b.limit} budget is spent: ${num(b.used)} used of ${num(b.max)}`;
}
