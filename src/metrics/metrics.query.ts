/**
 * The one SQL statement of a metrics request (docs/api/metrics.md): the matching rows' creation
 * instant and column value, aggregated with `count`/`sum`, time series bucketed by UTC period
 * and gap-filled with `generate_series`.
 *
 * Plan notes (docs/api/metrics.md, "How the statements are built"): every branch of a source is written so that the
 * `(workspace_id, created_at)` index range of the request drives it; daily and weekly buckets
 * use `date_bin` on the `timestamptz` (fixed 1-day / 7-day strides from a Monday at 00:00 UTC:
 * integer arithmetic, where `date_trunc(... at time zone 'UTC')` converts every row to local
 * time first), monthly buckets `date_trunc` in UTC. The statement is sent with real `$n`
 * parameters (src/platform/db.ts, {@link executeParameterised}).
 */
import type { Granularity, TMetricCommon, TMetricsResponse } from './metrics.schema.ts'
import { executeParameterised, type Em, type Orm } from '../platform/db.ts'
import type { SqlFragment } from '../platform/sql.ts'

/** One set of rows a metric counts: a table expression and its WHERE (without the dates). */
export interface MetricBranch {
  /** `table alias` (joins allowed) and the parameters of its joins. */
  from: SqlFragment
  /** Visibility, scope and filters, without the dates. */
  where: SqlFragment
  /** The alias whose `created_at` the dates and buckets use, and whose column is averaged. */
  alias: string
}

/** A table expression without parameters, as a {@link MetricBranch}'s `from`. */
export const table = (sql: string): SqlFragment => ({ sql, params: [] })

/** What a resource's service supplies: the rows it counts, as branches that never share a row (UNION ALL). */
export interface MetricSource {
  branches: MetricBranch[]
}

/** A built statement: its text (`?` placeholders) and parameters. */
export interface MetricStatement {
  sql: string
  params: unknown[]
}

/** Buckets per granularity: `p` is the period's first instant as a UTC `timestamp`. */
const BUCKET: Record<Granularity, (at: string) => string> = {
  daily: (at) => `date_bin('1 day', ${at}, timestamptz '2000-01-03 00:00:00+00')`,
  weekly: (at) => `date_bin('7 days', ${at}, timestamptz '2000-01-03 00:00:00+00')`,
  monthly: (at) => `date_trunc('month', ${at} at time zone 'UTC')`,
}
/** Whether {@link BUCKET} yields a `timestamptz` (converted to UTC `timestamp` once per period). */
const BUCKET_IS_TZ: Record<Granularity, boolean> = { daily: true, weekly: true, monthly: false }
const TRUNC: Record<Granularity, string> = { daily: 'day', weekly: 'week', monthly: 'month' }
const STEP: Record<Granularity, string> = { daily: '1 day', weekly: '1 week', monthly: '1 month' }
const DAY_MS = 86_400_000

/** Rounds an average to 4 decimals (docs/api/metrics.md). */
const round4 = (value: number): number => Math.round(value * 10_000) / 10_000

/**
 * `cached_at`: now as ISO 8601 with microseconds and `Z` (specification: "Metrics endpoints");
 * the sub-millisecond digits come from the monotonic clock added to the process origin. The
 * agent leaderboard stamps its answers with it too (./leaderboard.service.ts).
 */
export function nowMicros(): string {
  const micros = Math.floor((performance.timeOrigin + performance.now()) * 1000)
  const iso = new Date(Math.floor(micros / 1000)).toISOString()
  return `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`
}

/**
 * Start (inclusive) and end (exclusive) instants of the date filter on `<alias>.created_at`, in
 * UTC; `date_to` runs to the end of its day. The SQL starts with ` and ` (empty without dates).
 * The executions list filters with it too (src/workflows/workflow-executions.service.ts).
 */
export function dateBounds(alias: string, input: { date_from?: string; date_to?: string }): SqlFragment {
  const parts: string[] = []
  const params: unknown[] = []
  if (input.date_from) {
    parts.push(`${alias}.created_at >= ?::timestamptz`)
    params.push(`${input.date_from}T00:00:00Z`)
  }
  if (input.date_to) {
    parts.push(`${alias}.created_at < ?::timestamptz`)
    params.push(new Date(Date.parse(`${input.date_to}T00:00:00Z`) + DAY_MS).toISOString())
  }
  return { sql: parts.map((part) => ` and ${part}`).join(''), params }
}

/** The counted column of `input`, or undefined when rows are counted (`*` or absent). */
const columnOf = (input: TMetricCommon): string | undefined => (input.column && input.column !== '*' ? input.column : undefined)

/**
 * Each branch aggregated on its own (`count`, `sum`, grouped by `bucket` when given): the rows
 * of a branch go straight from its scan into its aggregate, and the few partial results are
 * added up after (UNION ALL of disjoint branches).
 */
function branchesSql(source: MetricSource, input: TMetricCommon, bucket?: (at: string) => string): MetricStatement {
  const column = columnOf(input)
  const params: unknown[] = []
  const selects = source.branches.map((branch) => {
    const a = branch.alias
    const dates = dateBounds(a, input)
    params.push(...branch.from.params, ...branch.where.params, ...dates.params)
    const aggregates = `count(${column ? `${a}.${column}` : '*'}) as c, ${column ? `sum(${a}.${column})` : 'null::bigint'} as s`
    const from = `from ${branch.from.sql} where ${branch.where.sql}${dates.sql}`
    return bucket ? `select ${bucket(`${a}.created_at`)} as p, ${aggregates} ${from} group by 1` : `select ${aggregates} ${from}`
  })
  return { sql: selects.join(' union all '), params }
}

/**
 * The statement of `input` over `source`: over `input.column` (averages, or a count of its
 * non-null values), or counting rows when the column is `*` or absent. Accumulated
 * calculations answer one row (`count`, `sum`); time series one row per period (`date`, `c`, `s`).
 */
export function metricStatement(source: MetricSource, input: TMetricCommon): MetricStatement {
  if (input.calculation === 'accumulated_count' || input.calculation === 'accumulated_average') {
    const parts = branchesSql(source, input)
    return { sql: `select coalesce(sum(x.c), 0)::float8 as count, sum(x.s)::float8 as sum from (${parts.sql}) x`, params: parts.params }
  }
  const granularity = input.granularity ?? 'daily'
  const parts = branchesSql(source, input, BUCKET[granularity])
  const unit = TRUNC[granularity]
  const from = input.date_from ? `${input.date_from}T00:00:00` : null
  const to = input.date_to ? `${input.date_to}T00:00:00` : null
  return {
    sql: `with m as (select ${BUCKET_IS_TZ[granularity] ? `x.p at time zone 'UTC'` : 'x.p'} as p, sum(x.c)::float8 as c, sum(x.s)::float8 as s
       from (${parts.sql}) x group by x.p),
     g as (select date_trunc('${unit}', coalesce(?::timestamp, (select min(p) from m), ?::timestamp)) as lo,
       date_trunc('${unit}', coalesce(?::timestamp, (select max(p) from m), ?::timestamp)) as hi)
     select to_char(s.d, 'YYYY-MM-DD') as date, coalesce(m.c, 0)::float8 as c, m.s
     from g cross join generate_series(g.lo, g.hi, interval '${STEP[granularity]}') as s(d)
     left join m on m.p = s.d order by s.d`,
    params: [...parts.params, from, to, to, from],
  }
}

/** The answer of `input` from the rows of its {@link metricStatement}, stamped `cachedAt`. */
function metricAnswer(input: TMetricCommon, rows: Record<string, unknown>[], cachedAt: string): TMetricsResponse {
  if (input.calculation === 'accumulated_count' || input.calculation === 'accumulated_average') {
    const [row] = rows
    const count = Number(row?.count ?? 0)
    if (input.calculation === 'accumulated_count') return { total: count, data: [{ value: count }], cached_at: cachedAt }
    const value = count ? round4(Number(row?.sum) / count) : null
    return { total: value, data: [{ value, count }], cached_at: cachedAt }
  }
  const points = rows.map((row) => ({ date: String(row.date), count: Number(row.c), sum: row.s === null ? null : Number(row.s) }))
  if (input.calculation === 'time_series_count') {
    const data = points.map((point) => ({ date: point.date, value: point.count }))
    return { total: data.reduce((sum, point) => sum + point.value, 0), data, cached_at: cachedAt }
  }
  const data = points.map((point) => ({
    date: point.date,
    value: point.count && point.sum !== null ? round4(point.sum / point.count) : null,
    count: point.count,
  }))
  const count = points.reduce((sum, point) => sum + point.count, 0)
  const sum = points.reduce((total, point) => total + (point.sum ?? 0), 0)
  return { total: count ? round4(sum / count) : null, data, cached_at: cachedAt }
}

/** Where a metric runs: the ORM (for its `pg` pool) and the request's EntityManager (PGlite). */
export interface MetricRunner {
  orm: Orm
  em: () => Em
}

/** Runs the calculation of `input` over `source` in one statement with real parameters. */
export async function runMetric(runner: MetricRunner, source: MetricSource, input: TMetricCommon): Promise<TMetricsResponse> {
  const statement = metricStatement(source, input)
  const cachedAt = nowMicros()
  const rows = await executeParameterised(runner.orm, runner.em, statement.sql, statement.params)
  return metricAnswer(input, rows, cachedAt)
}
