/**
 * How the model gateway's budget refusal begins (docs/gateway.md): a runtime that finds it in
 * its CLI's failed turn knows the call was held back by a budget, not failed by the model,
 * and leaves the session to its budget's policy instead of crashing it.
 */
export const OVER_BUDGET = 'warren: over budget';
