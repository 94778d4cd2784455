export type { Priority, RequestGate } from './types.js';
export { RequestBudget, BudgetClosedError, createRequestBudget } from './request-budget.js';
export { BUDGET_DEFAULTS, BudgetOptionsError, resolveBudgetOptions } from './options.js';
export type { BackoffOptions, BudgetEvent, RequestBudgetOptions, ResolvedBudgetOptions } from './options.js';
export type { BudgetSnapshot, BudgetTotals, RetryReason } from './snapshot.js';
export { createBudgetMetrics } from './metrics.js';
export type { BudgetMetrics, BudgetSnapshotSource } from './metrics.js';
export { parseRetryAfter } from './retry-after.js';
