/**
 * Inputs and outputs of `GET usage` and the budgets endpoints (docs/api/usage-and-budgets.md).
 * Inputs are strict objects, so an unknown field is a 400 naming it; the rules between fields
 * (a scope's target, at least one limit) are checked after the fields and name the field too.
 */
import { z } from 'zod'
import { BUDGET_ACTIONS, BUDGET_PERIODS, BUDGET_SCOPES } from '../../entities/index.ts'
import { iso, isoOrNull, jsonBoolean, jsonInt, name, pageQuery, sortParam, text } from '../access/wire.ts'
import { DateOnly, dateOrderRule } from '../metrics/index.ts'

/** What `group_by` may name: a period (at most one) or a dimension. */
export const USAGE_GROUPS = ['day', 'week', 'month', 'agent', 'user', 'model', 'access_token'] as const
export type UsageGroup = (typeof USAGE_GROUPS)[number]
const PERIOD_GROUPS: readonly UsageGroup[] = ['day', 'week', 'month']

/** `group_by`: one or two of {@link USAGE_GROUPS}, comma-separated (or an array from tRPC callers), default `day`. */
const GroupBy = z
  .union([z.string().max(100), z.array(z.string().max(20)).max(2)])
  .transform((value) => (Array.isArray(value) ? value : value.split(',')).map((part) => part.trim()).filter(Boolean))
  .pipe(
    z
      .array(z.enum(USAGE_GROUPS))
      .min(1, 'name one or two groups')
      .max(2, 'name one or two groups')
      .refine((groups) => new Set(groups).size === groups.length, 'must not repeat a group')
      .refine((groups) => groups.filter((group) => PERIOD_GROUPS.includes(group)).length <= 1, 'name at most one of day, week and month'),
  )

/** `GET /api/v1/usage` query. */
export const UsageInput = z
  .strictObject({
    group_by: GroupBy.optional(),
    date_from: DateOnly.optional(),
    date_to: DateOnly.optional(),
    agent_uuid: z.uuid().optional(),
    user_id: z.number().int().min(1).max(2_147_483_647).optional(),
    model: text(255, 1).optional(),
    workspace_uuid: z.uuid().optional(),
  })
  .superRefine(dateOrderRule)
  .prefault({})
export type TUsageInput = z.infer<typeof UsageInput>

const Totals = {
  runs: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  /** US dollars, 6 decimals. */
  cost: z.number(),
}

/** One group of `GET usage`: the keys it is grouped by, then its sums. */
export const UsageRow = z.object({
  date: z.string().optional(),
  agent: z.object({ uuid: z.uuid(), name: z.string() }).nullable().optional(),
  user: z.object({ id: z.number().int(), name: z.string() }).nullable().optional(),
  model: z.string().nullable().optional(),
  access_token: z.object({ uuid: z.uuid(), name: z.string() }).nullable().optional(),
  ...Totals,
})
export type TUsageRow = z.infer<typeof UsageRow>

/** `GET usage`'s answer. */
export const UsageAnswer = z.object({
  data: z.array(UsageRow),
  meta: z.object({ totals: z.object(Totals), currency: z.literal('USD') }),
})
export type TUsageAnswer = z.infer<typeof UsageAnswer>

/** US dollars: above 0, at most 6 decimals; a JSON number (a pipe, so a REST body's `"5"` is not coerced: see src/access/wire.ts). */
const Dollars = z.number().pipe(
  z
    .number()
    .gt(0)
    .max(100_000_000_000)
    .refine((value) => Math.abs(Math.round(value * 1e6) - value * 1e6) < 1e-6, 'must have at most 6 decimals'),
)

/** Percentages of a limit that alert: 1..5 distinct integers 1..100. */
const Thresholds = z
  .array(jsonInt(1, 100))
  .min(1)
  .max(5)
  .refine((values) => new Set(values).size === values.length, 'must be distinct')

/** The body fields of a budget; `POST` requires `name`, `scope` and `period`, `PUT` none. */
const budgetFields = {
  name: name(255),
  scope: z.enum(BUDGET_SCOPES),
  agent_uuid: z.uuid().nullable().optional(),
  user_id: jsonInt(1, 2_147_483_647).nullable().optional(),
  access_token_uuid: z.uuid().nullable().optional(),
  period: z.enum(BUDGET_PERIODS),
  limit_cost: Dollars.nullable().optional(),
  limit_tokens: jsonInt(1, Number.MAX_SAFE_INTEGER).nullable().optional(),
  action: z.enum(BUDGET_ACTIONS),
  alert_thresholds: Thresholds,
  is_active: jsonBoolean(),
}

/** Which target field each scope needs; the others must be null. */
export const SCOPE_TARGETS = { workspace: null, agent: 'agent_uuid', user: 'user_id', access_token: 'access_token_uuid' } as const
const TARGET_FIELDS = ['agent_uuid', 'user_id', 'access_token_uuid'] as const

/** A budget as it is about to be stored: every field known (after a PUT merged it with the stored one). */
export interface BudgetDraft {
  name: string
  scope: (typeof BUDGET_SCOPES)[number]
  agent_uuid: string | null
  user_id: number | null
  access_token_uuid: string | null
  period: (typeof BUDGET_PERIODS)[number]
  limit_cost: number | null
  limit_tokens: number | null
  action: (typeof BUDGET_ACTIONS)[number]
  alert_thresholds: number[]
  is_active: boolean
}

/**
 * The rules between a budget's fields (docs/api/usage-and-budgets.md, "Budgets"), each naming its
 * field: the target its scope needs, no target it does not, and at least one limit.
 */
export function budgetProblems(value: Partial<BudgetDraft>): { path: [string]; message: string }[] {
  const problems: { path: [string]; message: string }[] = []
  if (!value.scope) return problems
  const needed = SCOPE_TARGETS[value.scope]
  for (const field of TARGET_FIELDS) {
    const given = value[field] !== null && value[field] !== undefined
    if (field === needed && !given) problems.push({ path: [field], message: `${field} is required for scope ${value.scope}` })
    if (field !== needed && given) problems.push({ path: [field], message: `${field} is only for scope ${scopeOf(field)}` })
  }
  if ((value.limit_cost ?? null) === null && (value.limit_tokens ?? null) === null) {
    problems.push({ path: ['limit_cost'], message: 'limit_cost or limit_tokens is required' })
  }
  return problems
}

/** {@link budgetProblems} as zod issues. */
function budgetRules(value: Partial<BudgetDraft>, issues: z.core.$RefinementCtx): void {
  for (const problem of budgetProblems(value)) issues.addIssue({ code: 'custom', ...problem })
}

const scopeOf = (field: (typeof TARGET_FIELDS)[number]) => Object.entries(SCOPE_TARGETS).find(([, target]) => target === field)?.[0]

/** `POST /api/v1/budgets` body. */
export const CreateBudgetInput = z
  .strictObject({
    ...budgetFields,
    action: budgetFields.action.default('block'),
    alert_thresholds: budgetFields.alert_thresholds.default([80, 100]),
    is_active: budgetFields.is_active.default(true),
    workspace_uuid: z.uuid().optional(),
  })
  .superRefine(budgetRules)
export type TCreateBudgetInput = z.infer<typeof CreateBudgetInput>

/** `PUT /api/v1/budgets/{budget_uuid}` body: any of the fields; the merged budget must satisfy {@link budgetRules}. */
export const UpdateBudgetInput = z.strictObject({
  budget_uuid: z.uuid(),
  name: budgetFields.name.optional(),
  scope: budgetFields.scope.optional(),
  agent_uuid: budgetFields.agent_uuid,
  user_id: budgetFields.user_id,
  access_token_uuid: budgetFields.access_token_uuid,
  period: budgetFields.period.optional(),
  limit_cost: budgetFields.limit_cost,
  limit_tokens: budgetFields.limit_tokens,
  action: budgetFields.action.optional(),
  alert_thresholds: budgetFields.alert_thresholds.optional(),
  is_active: budgetFields.is_active.optional(),
  workspace_uuid: z.uuid().optional(),
})
export type TUpdateBudgetInput = z.infer<typeof UpdateBudgetInput>

/** Path of retrieve and delete (plus the workspace context). */
export const BudgetPathInput = z.strictObject({ budget_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** Sortable columns of the budget list. */
export const BUDGET_SORTS = ['created_at', '-created_at', 'name', '-name'] as const

/** `GET /api/v1/budgets` query. */
export const BudgetListInput = z
  .strictObject({
    ...pageQuery,
    sort: sortParam(BUDGET_SORTS, 'created_at'),
    scope: z.enum(BUDGET_SCOPES).optional(),
    workspace_uuid: z.uuid().optional(),
  })
  .prefault({})
export type TBudgetListInput = z.infer<typeof BudgetListInput>

/** The Budget shape (docs/api/usage-and-budgets.md, "Budgets"). */
export const Budget = z.object({
  uuid: z.uuid(),
  name: z.string(),
  scope: z.enum(BUDGET_SCOPES),
  agent_uuid: z.uuid().nullable(),
  user_id: z.number().int().nullable(),
  access_token_uuid: z.uuid().nullable(),
  period: z.enum(BUDGET_PERIODS),
  limit_cost: z.number().nullable(),
  limit_tokens: z.number().int().nullable(),
  action: z.enum(BUDGET_ACTIONS),
  alert_thresholds: z.array(z.number().int()),
  is_active: z.boolean(),
  spent_cost: z.number(),
  spent_tokens: z.number().int(),
  remaining_cost: z.number().nullable(),
  remaining_tokens: z.number().int().nullable(),
  period_start: z.string().nullable(),
  period_end: z.string().nullable(),
  exceeded: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
})
export type TBudget = z.infer<typeof Budget>
export const BudgetEnvelope = z.object({ data: Budget })

/** A budget row with its spend, as `budgetSelectSql` (src/usage/spend.ts) reads it. */
export interface BudgetRow {
  id: number
  uuid: string
  name: string
  scope: TBudget['scope']
  agentUuid: string | null
  userId: number | null
  accessTokenUuid: string | null
  period: TBudget['period']
  limitCost: string | number | null
  limitTokens: string | number | null
  action: TBudget['action']
  alertThresholds: unknown
  isActive: boolean
  spentCost: string | number
  spentTokens: string | number
  periodStart: Date | string | null
  periodEnd: Date | string | null
  createdAt: Date | string
  updatedAt: Date | string
}

/** Dollars as a number with at most 6 decimals. */
export const dollars = (value: string | number): number => Number(Number(value).toFixed(6))

/** A budget row as the Budget shape: `remaining_*` never below 0, `exceeded` once any limit is reached. */
export function toBudget(row: BudgetRow): TBudget {
  const limitCost = row.limitCost === null ? null : dollars(row.limitCost)
  const limitTokens = row.limitTokens === null ? null : Number(row.limitTokens)
  const spentCost = dollars(row.spentCost)
  const spentTokens = Number(row.spentTokens)
  const thresholds =
    typeof row.alertThresholds === 'string' ? (JSON.parse(row.alertThresholds) as number[]) : (row.alertThresholds as number[])
  return {
    uuid: row.uuid,
    name: row.name,
    scope: row.scope,
    agent_uuid: row.agentUuid,
    user_id: row.userId === null ? null : Number(row.userId),
    access_token_uuid: row.accessTokenUuid,
    period: row.period,
    limit_cost: limitCost,
    limit_tokens: limitTokens,
    action: row.action,
    alert_thresholds: thresholds,
    is_active: row.isActive,
    spent_cost: spentCost,
    spent_tokens: spentTokens,
    remaining_cost: limitCost === null ? null : dollars(Math.max(0, limitCost - spentCost)),
    remaining_tokens: limitTokens === null ? null : Math.max(0, limitTokens - spentTokens),
    period_start: isoOrNull(row.periodStart),
    period_end: isoOrNull(row.periodEnd),
    exceeded: (limitCost !== null && spentCost >= limitCost) || (limitTokens !== null && spentTokens >= limitTokens),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}
