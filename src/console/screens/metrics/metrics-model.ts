/**
 * What the metrics screen can ask (docs/api/metrics.md): the five endpoints with the columns each
 * may average and the filters each accepts, and one call that sends only an endpoint's own fields
 * (any other field is a 400 there). The screen keeps its choices in the address, so a view can be
 * bookmarked or shared; this module reads and writes them.
 */
import { api, type RouterInputs, type RouterOutputs } from '../../lib/api.ts'

export type MetricsAnswer = RouterOutputs['metrics']['agents']
export type Calculation = RouterInputs['metrics']['agents']['calculation']
export type Granularity = NonNullable<RouterInputs['metrics']['agents']['granularity']>
export type Visibility = NonNullable<RouterInputs['metrics']['agents']['visibility']>
export type ResourceKey = 'agents' | 'workflows' | 'workflowExecutions' | 'threads' | 'messages'

/** The filters an endpoint may take beyond the dates. */
type Filter = 'search' | 'visibility' | 'favorite' | 'template' | 'mine' | 'agent' | 'thread' | 'workflow'

interface ResourceSpec {
  label: string
  /** Singular, lower case, for sentences ("no thread matches"). */
  noun: string
  /** Numeric columns (docs/api/metrics.md, "Columns"), value and label. */
  columns: { value: string; label: string }[]
  filters: Filter[]
}

export const RESOURCES: Record<ResourceKey, ResourceSpec> = {
  agents: {
    label: 'Agents',
    noun: 'agent',
    columns: [{ value: 'usage_count', label: 'Usage count' }],
    filters: ['search', 'visibility', 'favorite', 'template', 'mine'],
  },
  workflows: {
    label: 'Workflows',
    noun: 'workflow',
    columns: [{ value: 'trigger_count', label: 'Trigger count' }],
    filters: ['search', 'visibility', 'favorite', 'template', 'mine'],
  },
  workflowExecutions: {
    label: 'Workflow executions',
    noun: 'workflow execution',
    columns: [{ value: 'duration_ms', label: 'Duration (ms)' }],
    filters: ['workflow', 'mine'],
  },
  threads: {
    label: 'Threads',
    noun: 'thread',
    columns: [{ value: 'messages_count', label: 'Messages per thread' }],
    filters: ['search', 'agent', 'mine'],
  },
  messages: {
    label: 'Messages',
    noun: 'message',
    columns: [
      { value: 'prompt_tokens', label: 'Prompt tokens' },
      { value: 'completion_tokens', label: 'Completion tokens' },
      { value: 'total_tokens', label: 'Total tokens' },
      { value: 'latency_ms', label: 'Latency (ms)' },
    ],
    filters: ['search', 'thread'],
  },
}

export const RESOURCE_KEYS = Object.keys(RESOURCES) as ResourceKey[]

export const CALCULATIONS: { value: Calculation; label: string }[] = [
  { value: 'accumulated_count', label: 'Count' },
  { value: 'time_series_count', label: 'Count over time' },
  { value: 'accumulated_average', label: 'Average' },
  { value: 'time_series_average', label: 'Average over time' },
]

export const GRANULARITIES: { value: Granularity; label: string }[] = [
  { value: 'daily', label: 'Daily' },
  { value: 'weekly', label: 'Weekly' },
  { value: 'monthly', label: 'Monthly' },
]

export const isSeries = (calculation: Calculation) => calculation.startsWith('time_series')
export const isAverage = (calculation: Calculation) => calculation.endsWith('average')

/** Everything the screen asks, as one flat set of choices (the address's query). */
export interface MetricChoices {
  resource: ResourceKey
  calculation: Calculation
  granularity: Granularity
  /** `*` counts rows; an average needs a real column. */
  column: string
  dateFrom: string | null
  dateTo: string | null
  search: string
  visibility: Visibility | null
  favorite: boolean
  template: boolean
  /** Only what the signed-in user created (or triggered): `user_id`. */
  mine: boolean
  agentUuid: string | null
  threadUuid: string | null
  workflowUuid: string | null
}

const pick = <T extends string>(value: string | null, allowed: readonly T[], fallback: T): T =>
  allowed.includes(value as T) ? (value as T) : fallback

/** The choices in `params`, defaults where absent or unknown. */
export function readChoices(params: URLSearchParams): MetricChoices {
  const resource = pick(params.get('resource'), RESOURCE_KEYS, 'agents')
  const calculation = pick(
    params.get('calculation'),
    CALCULATIONS.map((c) => c.value),
    'accumulated_count',
  )
  const columns = RESOURCES[resource].columns.map((c) => c.value)
  const column = isAverage(calculation) ? pick(params.get('column'), columns, columns[0]!) : pick(params.get('column'), ['*', ...columns], '*')
  return {
    resource,
    calculation,
    granularity: pick(
      params.get('granularity'),
      GRANULARITIES.map((g) => g.value),
      'daily',
    ),
    column,
    dateFrom: params.get('from'),
    dateTo: params.get('to'),
    search: params.get('search') ?? '',
    visibility: params.get('visibility') ? pick<Visibility>(params.get('visibility'), ['public', 'private', 'workspace'], 'workspace') : null,
    favorite: params.get('favorite') === '1',
    template: params.get('template') === '1',
    mine: params.get('mine') === '1',
    agentUuid: params.get('agent'),
    threadUuid: params.get('thread'),
    workflowUuid: params.get('workflow'),
  }
}

/** `choices` as the address's query, defaults left out. */
export function writeChoices(choices: MetricChoices): URLSearchParams {
  const entries: [string, string | null | false][] = [
    ['resource', choices.resource !== 'agents' && choices.resource],
    ['calculation', choices.calculation !== 'accumulated_count' && choices.calculation],
    ['granularity', choices.granularity !== 'daily' && choices.granularity],
    ['column', choices.column !== '*' && choices.column],
    ['from', choices.dateFrom],
    ['to', choices.dateTo],
    ['search', choices.search],
    ['visibility', choices.visibility],
    ['favorite', choices.favorite && '1'],
    ['template', choices.template && '1'],
    ['mine', choices.mine && '1'],
    ['agent', choices.agentUuid],
    ['thread', choices.threadUuid],
    ['workflow', choices.workflowUuid],
  ]
  const params = new URLSearchParams()
  for (const [key, value] of entries) if (value) params.set(key, value)
  return params
}

/** Does `resource` take `filter`? */
export const takes = (resource: ResourceKey, filter: Filter) => RESOURCES[resource].filters.includes(filter)

/**
 * The request body for the choices, with only the fields the endpoint accepts: granularity only
 * for a series, no `column` for a row count, `favorite`/`template` only when on (false filters
 * nothing), so the body is the smallest one that means the same (and shares its cache entry
 * with an identical REST request).
 */
export function requestOf(choices: MetricChoices, userId: number) {
  const { resource, calculation } = choices
  const search = choices.search.trim()
  return {
    calculation,
    ...(isSeries(calculation) ? { granularity: choices.granularity } : {}),
    ...(choices.column !== '*' ? { column: choices.column } : {}),
    ...(choices.dateFrom ? { date_from: choices.dateFrom } : {}),
    ...(choices.dateTo ? { date_to: choices.dateTo } : {}),
    ...(search && takes(resource, 'search') ? { search } : {}),
    ...(choices.visibility && takes(resource, 'visibility') ? { visibility: choices.visibility } : {}),
    ...(choices.favorite && takes(resource, 'favorite') ? { favorite: true } : {}),
    ...(choices.template && takes(resource, 'template') ? { template: true } : {}),
    ...(choices.mine && takes(resource, 'mine') ? { user_id: userId } : {}),
    ...(choices.agentUuid && takes(resource, 'agent') ? { agent_uuid: choices.agentUuid } : {}),
    ...(choices.threadUuid && takes(resource, 'thread') ? { thread_uuid: choices.threadUuid } : {}),
    ...(choices.workflowUuid && takes(resource, 'workflow') ? { workflow_uuid: choices.workflowUuid } : {}),
  }
}

type Body = ReturnType<typeof requestOf>

/**
 * Calls the endpoint of `resource` with `body` (built by {@link requestOf}, so it holds only that
 * endpoint's fields; the column is one of its columns).
 */
export function fetchMetric(resource: ResourceKey, body: Body): Promise<MetricsAnswer> {
  switch (resource) {
    case 'agents':
      return api.metrics.agents.mutate(body as RouterInputs['metrics']['agents'])
    case 'workflows':
      return api.metrics.workflows.mutate(body as RouterInputs['metrics']['workflows'])
    case 'workflowExecutions':
      return api.metrics.workflowExecutions.mutate(body as RouterInputs['metrics']['workflowExecutions'])
    case 'threads':
      return api.metrics.threads.mutate(body as RouterInputs['metrics']['threads'])
    case 'messages':
      return api.metrics.messages.mutate(body as RouterInputs['metrics']['messages'])
  }
}

/** True when no record matched: nothing to chart (docs/api/metrics.md, "Calculations"). */
export function isEmptyAnswer(calculation: Calculation, answer: MetricsAnswer): boolean {
  switch (calculation) {
    case 'accumulated_count':
    case 'time_series_count':
      return !answer.total
    case 'accumulated_average':
    case 'time_series_average':
      return answer.total === null
  }
}

const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 4 })

/** A metric value for people; null (an average of nothing) is a dash. */
export const formatValue = (value: number | null | undefined) => (value === null || value === undefined ? '—' : numberFormat.format(value))

const monthFormat = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' })

/** A period's label: its first day (a UTC date), as the granularity reads it. */
export function periodLabel(date: string, granularity: Granularity): string {
  if (granularity === 'monthly') return monthFormat.format(new Date(`${date}T00:00:00Z`))
  if (granularity === 'weekly') return `Week of ${date}`
  return date
}
