/**
 * What budgets have spent and what they allow (docs/api/usage-and-budgets.md): the spend of a
 * budget read from the usage rollup (`usage_daily`), the check made before a model call for a run
 * in scope, the alerts of thresholds reached, and the usage of model calls made outside runs.
 *
 * Periods are UTC calendar periods computed by PostgreSQL from its own clock (`now()`), so every
 * process agrees on them: `day`, `week` (from Monday: `date_trunc('week')` is ISO), `month`;
 * `total` has none.
 */
import type { Em } from '../platform/db.ts'
import { BudgetExceededError } from '../platform/errors.ts'
import { dollars, toBudget, type BudgetRow, type TBudget } from './usage.schema.ts'
import type { ResourceCtx } from '../context.ts'
import { countTokens } from './token-metrics.ts'

/** Whose model call it is: the run's workspace, agent (null for none), user and access token (null when the service started it). */
export interface SpendScope {
  workspaceId: number
  agentId: number | null
  userId: number | null
  accessTokenId: number | null
}

/** Budget `b`'s period unit for `date_trunc`: null for `total` (so every expression of its bounds is null). */
const UNIT = (b: string) => `nullif(${b}.period, 'total')`
/** The access token of the caller's request; null when the service acts for a user (a workflow execution, a firing). */
export const accessTokenOf = (ctx: ResourceCtx): number | null => (ctx.auth.token.id > 0 ? ctx.auth.token.id : null)

/** Whose spend a model call of the caller for agent `agentId` (null: none) is (docs/api/usage-and-budgets.md, "Enforcement"). */
export function spendScopeOf(ctx: ResourceCtx, agentId: number | null): SpendScope {
  return { workspaceId: ctx.workspace.workspace.id, agentId, userId: ctx.auth.user.id, accessTokenId: accessTokenOf(ctx) }
}

/** Start (inclusive) and end (exclusive) of budget `b`'s current period, as `timestamptz`; null for `total`. */
const PERIOD_START = (b: string) => `(date_trunc(${UNIT(b)}, now() at time zone 'UTC') at time zone 'UTC')`
const PERIOD_END = (b: string) => `((date_trunc(${UNIT(b)}, now() at time zone 'UTC') + ('1 ' || ${UNIT(b)})::interval) at time zone 'UTC')`
/** The same bounds as UTC days, unbounded for `total`: one range the rollup's key serves. */
const FIRST_DAY = (b: string) => `coalesce((date_trunc(${UNIT(b)}, now() at time zone 'UTC'))::date, date '-infinity')`
const END_DAY = (b: string) =>
  `coalesce((date_trunc(${UNIT(b)}, now() at time zone 'UTC') + ('1 ' || ${UNIT(b)})::interval)::date, date 'infinity')`

/**
 * The spend of budget `b` in its current period (`spentTokens`, `spentCost`), as a lateral
 * subquery over the rollup: its workspace's rows of the period's days, narrowed to its target.
 */
const SPEND_LATERAL = (b: string) => `lateral (
    select coalesce(sum(u.total_tokens), 0)::float8 as "spentTokens", coalesce(sum(u.cost), 0)::text as "spentCost"
    from usage_daily u
    where u.workspace_id = ${b}.workspace_id and u.day >= ${FIRST_DAY(b)} and u.day < ${END_DAY(b)}
      and (${b}.scope <> 'agent' or u.agent_id = ${b}.agent_id)
      and (${b}.scope <> 'user' or u.user_id = ${b}.user_id)
      and (${b}.scope <> 'access_token' or u.access_token_id = ${b}.access_token_id)) s`

/** The columns and joins of a budget read with its spend (alias `b`), as {@link BudgetRow}. */
export const BUDGET_SELECT = `b.id::float8 as id, b.uuid, b.name, b.scope, ag.uuid as "agentUuid", b.user_id as "userId", tk.uuid as "accessTokenUuid",
    b.period, b.limit_cost::text as "limitCost", b.limit_tokens::float8 as "limitTokens", b.action, b.alert_thresholds as "alertThresholds",
    b.is_active as "isActive", s."spentTokens", s."spentCost", ${PERIOD_START('b')} as "periodStart", ${PERIOD_END('b')} as "periodEnd",
    b.created_at as "createdAt", b.updated_at as "updatedAt"`
export const BUDGET_FROM = `budgets b left join agents ag on ag.id = b.agent_id left join access_tokens tk on tk.id = b.access_token_id cross join ${SPEND_LATERAL('b')}`

/** Budgets (alias `b`) whose scope covers a model call of `scope`: the workspace's, its agent's (alive), its user's, its token's. */
function inScopeSql(scope: SpendScope): { sql: string; params: unknown[] } {
  return {
    sql: `b.workspace_id = ? and b.is_active and (b.scope = 'workspace'
      or (b.scope = 'agent' and b.agent_id = ? and ag.deleted_at is null)
      or (b.scope = 'user' and b.user_id = ?)
      or (b.scope = 'access_token' and b.access_token_id = ?))`,
    params: [scope.workspaceId, scope.agentId ?? 0, scope.userId ?? 0, scope.accessTokenId ?? 0],
  }
}

/** Tokens and dollars a run has used but not stored yet (its steps so far), counted with the stored spend. */
export interface Unstored {
  tokens: number
  cost: number
}

/** What the budgets covering a model call say: whether any active one covers it, and the refusal of a reached `block` one. */
export interface BudgetVerdict {
  covered: boolean
  refusal: BudgetExceededError | null
}

/**
 * Whether any active budget covers `scope`, and the first active `block` one whose spend (plus
 * `unstored`) has reached a limit, as the error a caller is refused with. One statement: an index
 * probe when the workspace has no budget, the spend read only when one covers the call.
 */
export async function budgetVerdict(em: Em, scope: SpendScope, unstored: Unstored = { tokens: 0, cost: 0 }): Promise<BudgetVerdict> {
  const where = inScopeSql(scope)
  const [row] = await em.execute<(Partial<BudgetRow> & { covered: boolean; retryAfter: number | null })[]>(
    `select c.covered, r.* from (select exists (select 1 from budgets b left join agents ag on ag.id = b.agent_id where ${where.sql}) as covered) c
     left join lateral (
       select ${BUDGET_SELECT}, ceil(extract(epoch from ${PERIOD_END('b')} - now()))::float8 as "retryAfter"
       from ${BUDGET_FROM}
       where c.covered and ${where.sql} and b.action = 'block'
         and ((b.limit_tokens is not null and s."spentTokens" + ?::float8 >= b.limit_tokens)
           or (b.limit_cost is not null and s."spentCost"::numeric + ?::numeric >= b.limit_cost))
       order by b.id limit 1) r on true`,
    [...where.params, ...where.params, unstored.tokens, unstored.cost],
  )
  if (!row?.uuid) return { covered: row?.covered === true, refusal: null }
  return { covered: true, refusal: refusalOf(row as BudgetRow & { retryAfter: number | null }, unstored) }
}

/** {@link budgetVerdict}'s refusal alone. */
export async function budgetRefusal(em: Em, scope: SpendScope, unstored?: Unstored): Promise<BudgetExceededError | null> {
  return (await budgetVerdict(em, scope, unstored)).refusal
}

/** The error a reached budget's row refuses a call with. */
function refusalOf(row: BudgetRow & { retryAfter: number | null }, unstored: Unstored): BudgetExceededError {
  const budget = toBudget(row)
  const spent = { tokens: budget.spent_tokens + unstored.tokens, cost: dollars(budget.spent_cost + unstored.cost) }
  return new BudgetExceededError(refusalMessage(budget, spent), row.retryAfter === null ? null : Math.max(1, Number(row.retryAfter)))
}

/** `Budget "Team" (<uuid>) has reached its limit of 1000 tokens (1024 used) this month`. */
function refusalMessage(budget: TBudget, spent: { tokens: number; cost: number }): string {
  const period = { day: 'today', week: 'this week', month: 'this month', total: 'in total' }[budget.period]
  const limits: string[] = []
  if (budget.limit_tokens !== null && spent.tokens >= budget.limit_tokens)
    limits.push(`${budget.limit_tokens} tokens (${spent.tokens} used)`)
  if (budget.limit_cost !== null && spent.cost >= budget.limit_cost) limits.push(`$${budget.limit_cost} (${spent.cost} used)`)
  return `Budget "${budget.name}" (${budget.uuid}) has reached its limit of ${limits.join(' and ')} ${period}`
}

/**
 * Refuses a model call for `scope` when a budget blocks it; answers whether any active budget
 * covers it (when none does, nothing it spends can reach a threshold: {@link noteSpend} is not needed).
 * @throws BudgetExceededError (429, with `Retry-After` to the end of the budget's period).
 */
export async function requireWithinBudgets(em: Em, scope: SpendScope): Promise<boolean> {
  const verdict = await budgetVerdict(em, scope)
  if (verdict.refusal) throw verdict.refusal
  return verdict.covered
}

/** `budget.threshold_reached` (docs/api/usage-and-budgets.md, "Alerts"). */
export interface ThresholdReached {
  type: 'budget.threshold_reached'
  workspaceId: number
  data: { budget: TBudget; threshold: number; spent_cost: number; spent_tokens: number }
}

/**
 * Records every threshold the active budgets covering `scope` have reached in their current
 * period and not recorded yet (`budget_alerts`, whose key makes each one once across every
 * process), and answers them as events, in threshold order. Called after usage was stored; a
 * call that failed is made good by the next spend in the same scope (a threshold is "reached",
 * not "crossed").
 */
export async function recordThresholds(em: Em, scope: SpendScope): Promise<ThresholdReached[]> {
  const where = inScopeSql(scope)
  const recorded = await em.execute<{ budget_id: string | number; threshold: number }[]>(
    `with reached as (
       select b.id, coalesce((date_trunc(${UNIT('b')}, now() at time zone 'UTC'))::date, date '1970-01-01') as period_start, t.threshold::int as threshold,
         s."spentTokens", s."spentCost"
       from ${BUDGET_FROM} cross join jsonb_array_elements_text(b.alert_thresholds) as t(threshold)
       where ${where.sql}
         and ((b.limit_tokens is not null and s."spentTokens" * 100 >= b.limit_tokens * t.threshold::int)
           or (b.limit_cost is not null and s."spentCost"::numeric * 100 >= b.limit_cost * t.threshold::int))),
     recorded as (
       insert into budget_alerts (budget_id, period_start, threshold, spent_tokens, spent_cost, created_at)
       select id, period_start, threshold, "spentTokens", "spentCost"::numeric, now() from reached
       on conflict do nothing returning budget_id, threshold)
     select budget_id, threshold from recorded`,
    where.params,
  )
  // Usually none: the budgets are read again (with their spend) only for what was just recorded.
  if (recorded.length === 0) return []
  const rows = await em.execute<(BudgetRow & { threshold: number })[]>(
    `select ${BUDGET_SELECT}, r.threshold from jsonb_to_recordset(?::jsonb) as r(budget_id bigint, threshold int)
     join ${BUDGET_FROM} on b.id = r.budget_id order by b.id, r.threshold`,
    [JSON.stringify(recorded.map((row) => ({ budget_id: Number(row.budget_id), threshold: Number(row.threshold) })))],
  )
  return rows.map((row) => {
    const budget = toBudget(row)
    return {
      type: 'budget.threshold_reached',
      workspaceId: scope.workspaceId,
      data: { budget, threshold: Number(row.threshold), spent_cost: budget.spent_cost, spent_tokens: budget.spent_tokens },
    }
  })
}

/** The logger alerts are written to (any process logger). */
export interface AlertLog {
  info: (object: object, message: string) => void
  warn: (object: object, message: string) => void
}

/**
 * {@link recordThresholds}, then each event logged (`event: budget.threshold_reached`, the
 * outbound events of docs/api/usage-and-budgets.md, "Alerts"). Never throws: a failure is logged
 * and the next spend in the scope records what this one missed.
 */
export async function noteSpend(em: Em, log: AlertLog, scope: SpendScope): Promise<ThresholdReached[]> {
  try {
    const events = await recordThresholds(em, scope)
    for (const event of events) {
      log.info(
        {
          event: event.type,
          budget: event.data.budget.uuid,
          threshold: event.data.threshold,
          spent_tokens: event.data.spent_tokens,
          spent_cost: event.data.spent_cost,
        },
        'budget threshold reached',
      )
    }
    return events
  } catch (error) {
    log.warn({ err: error }, 'budget thresholds not recorded')
    return []
  }
}

/** Usage of a model call made outside a run's own steps: generation, embeddings, memory extraction. */
export interface CallUsage {
  /** The catalog slug; for embeddings, the embedding key (`openai/text-embedding-3-small`). */
  model: string
  promptTokens: number
  completionTokens: number
  /** US dollars. */
  cost: number
  /** How many runs it adds: 1 for a generation (the default), 0 for a call that serves a run or a document (embeddings, memory extraction). */
  runs?: 0 | 1
}

/**
 * Adds a model call made outside a run's steps to the usage rollup, on the UTC day it is made: its
 * runs (see {@link CallUsage.runs}), tokens and cost (docs/api/usage-and-budgets.md, "How usage is counted").
 */
export async function recordCallUsage(em: Em, scope: SpendScope, usage: CallUsage): Promise<void> {
  // Used whether or not the rollup stores them.
  countTokens(usage.model, usage.promptTokens, usage.completionTokens)
  await em.execute(
    `insert into usage_daily as u (workspace_id, day, agent_id, user_id, access_token_id, model, runs, prompt_tokens, completion_tokens, total_tokens, cost)
     values (?, (now() at time zone 'UTC')::date, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (workspace_id, day, agent_id, user_id, access_token_id, model) do update
       set runs = u.runs + excluded.runs, prompt_tokens = u.prompt_tokens + excluded.prompt_tokens, completion_tokens = u.completion_tokens + excluded.completion_tokens,
         total_tokens = u.total_tokens + excluded.total_tokens, cost = u.cost + excluded.cost`,
    [
      scope.workspaceId,
      scope.agentId ?? 0,
      scope.userId ?? 0,
      scope.accessTokenId ?? 0,
      usage.model,
      usage.runs ?? 1,
      usage.promptTokens,
      usage.completionTokens,
      usage.promptTokens + usage.completionTokens,
      dollars(usage.cost),
    ],
  )
}

/** Tokens of one model call, as the AI SDK reports them. */
export interface CallTokens {
  promptTokens: number
  completionTokens: number
}

/**
 * A model call (or a few: a repair) made for the caller outside a run, metered
 * (docs/api/usage-and-budgets.md, "How usage is counted"): refused first when a budget of
 * `scope` blocks it; then `work` runs, reporting each call's tokens to the callback it is given;
 * whatever it used is added to the rollup afterwards as one run (none for `model.runs: 0`),
 * whether it succeeded or not, and the thresholds it reached are recorded.
 * @param model the catalog slug, the price of tokens in US dollars, and how many runs the call
 *   adds ({@link CallUsage.runs}: 1, the default, for a generation; 0 for a call that serves a run,
 *   such as an evaluation's judge).
 * @throws BudgetExceededError (429) before `work`; what `work` throws.
 */
export async function meteredCall<T>(
  ctx: ResourceCtx,
  scope: SpendScope,
  model: { slug: string; costOf: (tokens: CallTokens) => number; runs?: 0 | 1 },
  work: (onUsage: (tokens: CallTokens) => void) => Promise<T>,
): Promise<T> {
  await requireWithinBudgets(ctx.em, scope)
  const used: CallTokens = { promptTokens: 0, completionTokens: 0 }
  try {
    return await work((tokens) => {
      used.promptTokens += tokens.promptTokens
      used.completionTokens += tokens.completionTokens
    })
  } finally {
    if (used.promptTokens + used.completionTokens > 0) {
      try {
        await recordCallUsage(ctx.em, scope, { model: model.slug, ...used, cost: model.costOf(used), runs: model.runs ?? 1 })
        await noteSpend(ctx.em, ctx.log, scope)
      } catch (error) {
        ctx.log.warn({ err: error }, 'model call usage not recorded')
      }
    }
  }
}
