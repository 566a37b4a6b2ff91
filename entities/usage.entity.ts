import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { AccessToken } from './access-token.entity.ts'
import { Agent } from './agent.entity.ts'
import { resourceKeys, timestamps } from './columns.ts'
import { User, Workspace } from './user-workspace.entity.ts'

/** Whose spend a budget counts (docs/api/usage-and-budgets.md, "Budgets"). */
export const BUDGET_SCOPES = ['workspace', 'agent', 'user', 'access_token'] as const
export type BudgetScope = (typeof BUDGET_SCOPES)[number]

/** The UTC calendar period a budget's spend is counted over; `total` never resets. */
export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number]

/** What reaching a limit does: `block` refuses model calls in scope, `notify` only alerts. */
export const BUDGET_ACTIONS = ['block', 'notify'] as const
export type BudgetAction = (typeof BUDGET_ACTIONS)[number]

/**
 * The usage rollup (`usage_daily`, docs/api/usage-and-budgets.md, "How usage is counted"): per
 * workspace, UTC day of the run's `created_at`, agent, user, access token and model, the number of
 * runs and their tokens and cost in US dollars. A trigger on `runs` keeps it equal to the runs'
 * stored usage in the transaction that changes them (src/migrations/Migration20261128170000_usage_budgets.ts);
 * generation calls add to it directly (src/usage/spend.ts). `agent_id`, `user_id` and
 * `access_token_id` are 0 for none and `model` is '' for none, so the key has no nulls; they are
 * plain ids, not foreign keys: usage outlives what it was spent on.
 */
export const UsageDaily = defineEntity({
  name: 'UsageDaily',
  tableName: 'usage_daily',
  properties: {
    workspace: () => p.manyToOne(Workspace).fieldName('workspace_id').deleteRule('cascade').primary(),
    day: p.date().primary(),
    agentId: p.bigint('number').fieldName('agent_id').primary(),
    userId: p.bigint('number').fieldName('user_id').primary(),
    accessTokenId: p.bigint('number').fieldName('access_token_id').primary(),
    model: p.string().length(255).primary(),
    runs: p.bigint('number').default(0),
    promptTokens: p.bigint('number').fieldName('prompt_tokens').default(0),
    completionTokens: p.bigint('number').fieldName('completion_tokens').default(0),
    totalTokens: p.bigint('number').fieldName('total_tokens').default(0),
    cost: p.decimal('number').precision(20).scale(6).default(0),
  },
})

export type IUsageDaily = InferEntity<typeof UsageDaily>

/**
 * A spending limit of a workspace (`budgets`, docs/api/usage-and-budgets.md): its scope (the
 * workspace, or one agent, member or access token of it), its period, its limits (tokens and/or
 * US dollars), what reaching one does and the percentages that alert. Its spend is never stored:
 * it is read from `usage_daily`.
 */
export const Budget = defineEntity({
  name: 'Budget',
  tableName: 'budgets',
  indexes: [{ properties: ['workspace', 'createdAt'] }],
  properties: {
    ...resourceKeys(),
    workspace: () => p.manyToOne(Workspace).fieldName('workspace_id').deleteRule('cascade'),
    name: p.string().length(255),
    scope: p.enum(BUDGET_SCOPES),
    agent: () => p.manyToOne(Agent).nullable().fieldName('agent_id').deleteRule('cascade'),
    user: () => p.manyToOne(User).nullable().fieldName('user_id').deleteRule('cascade'),
    accessToken: () => p.manyToOne(AccessToken).nullable().fieldName('access_token_id').deleteRule('cascade'),
    period: p.enum(BUDGET_PERIODS),
    limitCost: p.decimal('number').precision(20).scale(6).nullable().fieldName('limit_cost'),
    limitTokens: p.bigint('number').nullable().fieldName('limit_tokens'),
    action: p.enum(BUDGET_ACTIONS).default('block'),
    alertThresholds: p.json<number[]>().fieldName('alert_thresholds'),
    isActive: p.boolean().default(true).fieldName('is_active'),
    ...timestamps(),
  },
})

export type IBudget = InferEntity<typeof Budget>

/**
 * A threshold a budget reached in one period (`budget_alerts`): its key makes
 * `budget.threshold_reached` once per budget, period and threshold across every process
 * (docs/api/usage-and-budgets.md, "Alerts"). `period_start` is 1970-01-01 for a `total` budget.
 */
export const BudgetAlert = defineEntity({
  name: 'BudgetAlert',
  tableName: 'budget_alerts',
  properties: {
    budget: () => p.manyToOne(Budget).fieldName('budget_id').deleteRule('cascade').primary(),
    periodStart: p.date().fieldName('period_start').primary(),
    threshold: p.integer().primary(),
    spentTokens: p.bigint('number').fieldName('spent_tokens'),
    spentCost: p.decimal('number').precision(20).scale(6).fieldName('spent_cost'),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
  },
})

export type IBudgetAlert = InferEntity<typeof BudgetAlert>
