/**
 * Inputs and outputs of the metrics endpoints (specification: "Metrics endpoints"; docs/api/metrics.md). Each endpoint's input is a strict object of the common fields plus its own
 * filters, so an unknown filter is a 400 naming it; the cross-field rules (granularity for
 * series, column for averages, date order) are checked after the fields and name the field too.
 */
import { z } from 'zod'
import { VISIBILITIES } from '../../entities/index.ts'
import { CategoryUuids } from '../access/resource.schema.ts'
import { jsonBoolean, jsonInt, text } from '../access/wire.ts'

/*
 * The fixed sets below are `z.literal([...])` rather than `z.enum([...])`: the same validation,
 * the same issues and the same JSON Schema (`enum`), but trpc-to-openapi builds a new `z.string()`
 * for every `z.enum` field of a REST input on every request (its coercion pass), which the
 * cached metrics answers would otherwise pay on each hit.
 */

export const CALCULATIONS = ['accumulated_count', 'time_series_count', 'accumulated_average', 'time_series_average'] as const
export type Calculation = (typeof CALCULATIONS)[number]
const GRANULARITIES = ['daily', 'weekly', 'monthly'] as const
export type Granularity = (typeof GRANULARITIES)[number]

/** Numeric columns each endpoint may average (docs/api/metrics.md); `*` counts rows. */
const METRIC_COLUMNS = {
  agents: ['usage_count'],
  workflows: ['trigger_count'],
  workflow_executions: ['duration_ms'],
  threads: ['messages_count'],
  messages: ['prompt_tokens', 'completion_tokens', 'total_tokens', 'latency_ms'],
} as const
type MetricResource = keyof typeof METRIC_COLUMNS

/**
 * `YYYY-MM-DD`, a real calendar day (`2026-02-30` is refused) of the years 1970..2100, which
 * bounds a gap-filled daily series to about 48,000 points. The executions list filters dates
 * with it too (src/workflows/workflow-execution.schema.ts).
 */
export const DateOnly = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`)
    return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value
  }, 'must be a real calendar date')
  .refine((value) => value >= '1970-01-01' && value <= '2100-12-31', 'must be between 1970-01-01 and 2100-12-31')

const common = (resource: MetricResource) => ({
  calculation: z.literal(CALCULATIONS),
  granularity: z.literal(GRANULARITIES).optional(),
  column: z.literal(['*', ...METRIC_COLUMNS[resource]]).optional(),
  date_from: DateOnly.optional(),
  date_to: DateOnly.optional(),
})

const user_id = jsonInt(1, 2_147_483_647).optional()
const search = text(255).optional()
const uuid = z.uuid().optional()

/** The cross-field rules of docs/api/metrics.md, each naming its field. */
function metricRules(
  value: { calculation: Calculation; granularity?: Granularity; column?: string; date_from?: string; date_to?: string },
  issues: z.core.$RefinementCtx,
) {
  const series = value.calculation.startsWith('time_series')
  const average = value.calculation.endsWith('average')
  if (series && !value.granularity) {
    issues.addIssue({ code: 'custom', path: ['granularity'], message: 'granularity is required for a time series' })
  }
  if (average && !value.column) issues.addIssue({ code: 'custom', path: ['column'], message: 'column is required for an average' })
  if (average && value.column === '*') issues.addIssue({ code: 'custom', path: ['column'], message: '* cannot be averaged' })
  dateOrderRule(value, issues)
}

/**
 * `date_from` later than `date_to` is a 400 naming `date_from` (docs/api/metrics.md); shared by the
 * metrics inputs and the executions list (src/workflows/workflow-execution.schema.ts).
 */
export function dateOrderRule(value: { date_from?: string; date_to?: string }, issues: z.core.$RefinementCtx): void {
  if (value.date_from && value.date_to && value.date_from > value.date_to) {
    issues.addIssue({ code: 'custom', path: ['date_from'], message: 'date_from must not be after date_to' })
  }
}

const resourceFilters = {
  workspace_uuid: uuid,
  user_id,
  search,
  visibility: z.literal(VISIBILITIES).optional(),
  category_uuids: CategoryUuids.optional(),
  favorite: jsonBoolean().optional(),
  template: jsonBoolean().optional(),
}

export const AgentMetricsInput = z.strictObject({ ...common('agents'), ...resourceFilters }).superRefine(metricRules)
export const WorkflowMetricsInput = z.strictObject({ ...common('workflows'), ...resourceFilters }).superRefine(metricRules)
export const ThreadMetricsInput = z
  .strictObject({ ...common('threads'), workspace_uuid: uuid, user_id, search, agent_uuid: uuid })
  .superRefine(metricRules)
export const MessageMetricsInput = z.strictObject({ ...common('messages'), search, thread_uuid: uuid }).superRefine(metricRules)
export const ExecutionMetricsInput = z
  .strictObject({
    ...common('workflow_executions'),
    user_id,
    workflow_uuid: uuid,
    workflow_uuids: z.array(z.uuid()).max(100).optional(),
  })
  .superRefine(metricRules)

export type TAgentMetricsInput = z.infer<typeof AgentMetricsInput>
export type TWorkflowMetricsInput = z.infer<typeof WorkflowMetricsInput>
export type TThreadMetricsInput = z.infer<typeof ThreadMetricsInput>
export type TMessageMetricsInput = z.infer<typeof MessageMetricsInput>
export type TExecutionMetricsInput = z.infer<typeof ExecutionMetricsInput>
/** The common fields every metrics input carries. */
export type TMetricCommon = z.infer<z.ZodObject<ReturnType<typeof common>>>

/** One point of `data`: `{value}`, `{value, count}`, `{date, value}` or `{date, value, count}`. */
const MetricPoint = z.object({
  date: z.string().optional(),
  value: z.number().nullable(),
  count: z.number().int().optional(),
})

/** A metrics answer (specification: "Response fields and shapes per calculation"). */
export const MetricsResponse = z.object({
  total: z.number().nullable(),
  data: z.array(MetricPoint),
  cached_at: z.string(),
})
export type TMetricsResponse = z.infer<typeof MetricsResponse>

/** `GET /api/v1/workspaces/{workspace_uuid}/metrics`. */
export const WorkspaceMetricsInput = z.strictObject({ workspace_uuid: z.uuid() })
export const WorkspaceMetricsResponse = z.object({
  data: z.object({
    agents: z.number().int(),
    prompts: z.number().int(),
    workflows: z.number().int(),
    tools: z.number().int(),
    accounts: z.number().int(),
    threads: z.number().int(),
    messages: z.number().int(),
    workflow_executions: z.number().int(),
    members: z.number().int(),
    runs: z.number().int(),
    tokens: z.number().int(),
  }),
})
export type TWorkspaceMetrics = z.infer<typeof WorkspaceMetricsResponse>['data']
