/**
 * The usage capability (docs/api/usage-and-budgets.md): `GET usage`, budgets, and what the
 * capabilities that call models use to respect them: the check before a model call
 * ({@link requireWithinBudgets}, {@link budgetRefusal}), the alerts after usage was stored
 * ({@link noteSpend}), the usage of calls made outside runs ({@link recordCallUsage}) and the
 * tokens counter of `GET /metrics` ({@link countTokens}).
 */
export * as budgets from './budgets.service.ts'
export { usage } from './usage.service.ts'
export {
  accessTokenOf,
  budgetRefusal,
  meteredCall,
  spendScopeOf,
  noteSpend,
  recordCallUsage,
  recordThresholds,
  requireWithinBudgets,
  type CallTokens,
  type CallUsage,
  type SpendScope,
  type ThresholdReached,
  type Unstored,
} from './spend.ts'
export { countTokens } from './token-metrics.ts'
export {
  Budget,
  BudgetEnvelope,
  BudgetListInput,
  BudgetPathInput,
  CreateBudgetInput,
  UpdateBudgetInput,
  UsageAnswer,
  UsageInput,
} from './usage.schema.ts'
