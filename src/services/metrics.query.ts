/**
 * The one SQL statement of a metrics request (API.md section 6): the matching rows' creation
 * period and column value, aggregated with `count`/`avg`, time series bucketed with
 * `date_trunc` in UTC and gap-filled with `generate_series`.
 */
import type { SqlFragment } from '../access/visibility.ts'
import type { Granularity, TMetricCommon, TMetricsResponse } from '../schemas/metrics.schema.ts'
import type { Em } from '../db.ts'

/** What a resource's service supplies: its table expression, WHERE and numeric column. */
export interface MetricSource {
  /** `table alias` (joins allowed). */
  from: string
  /** The WHERE (visibility, scope and filters), without the dates. */
  where: SqlFragment
  /** The alias whose `created_at` the dates and buckets use. */
  alias: string
}

const TRUNC: Record<Granularity, string> = { daily: 'day', weekly: 'week', monthly: 'month' }
const STEP: Record<Granularity, string> = { daily: '1 day', weekly: '1 week', monthly: '1 month' }
const DAY_MS = 86_400_000

/** Rounds an average to 4 decimals (API.md section 6). */
const round4 = (value: number): number => Math.round(value * 10_000) / 10_000

/**
 * `cached_at`: now as ISO 8601 with microseconds and `Z` (specification: "Metrics endpoints");
 * the sub-millisecond digits come from the monotonic clock added to the process origin.
 */
function nowMicros(): string {
  const micros = Math.floor((performance.timeOrigin + performance.now()) * 1000)
  const iso = new Date(Math.floor(micros / 1000)).toISOString()
  return `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`
}

/** Start (inclusive) and end (exclusive) instants of the date filter; `date_to` runs to the end of its day. */
function dateBounds(alias: string, input: TMetricCommon): SqlFragment {
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

/**
 * Runs the calculation of `input` over `source` in one statement: over `input.column` (averages,
 * or a count of its non-null values), or counting rows when the column is `*` or absent.
 */
export async function runMetric(em: Em, source: MetricSource, input: TMetricCommon): Promise<TMetricsResponse> {
  const column = input.column && input.column !== '*' ? input.column : undefined
  const a = source.alias
  const dates = dateBounds(a, input)
  const where = `${source.where.sql}${dates.sql}`
  const params = [...source.where.params, ...dates.params]
  const counted = column ? `${a}.${column}` : '*'
  const cachedAt = nowMicros()

  if (input.calculation === 'accumulated_count' || input.calculation === 'accumulated_average') {
    const [row] = await em.execute(
      `select count(${counted})::float8 as count, sum(${column ? `${a}.${column}` : 'null::float8'})::float8 as sum from ${source.from} where ${where}`,
      params,
    )
    const count = Number(row?.count ?? 0)
    if (input.calculation === 'accumulated_count') return { total: count, data: [{ value: count }], cached_at: cachedAt }
    const value = count ? round4(Number(row?.sum) / count) : null
    return { total: value, data: [{ value, count }], cached_at: cachedAt }
  }

  const granularity = input.granularity ?? 'daily'
  const unit = TRUNC[granularity]
  const from = input.date_from ? `${input.date_from}T00:00:00` : null
  const to = input.date_to ? `${input.date_to}T00:00:00` : null
  const rows = await em.execute(
    `with m as (
       select date_trunc('${unit}', ${a}.created_at at time zone 'UTC') as p, count(${counted})::float8 as c,
         ${column ? `sum(${a}.${column})::float8` : 'null::float8'} as s
       from ${source.from} where ${where} group by 1),
     g as (select date_trunc('${unit}', coalesce(?::timestamp, (select min(p) from m), ?::timestamp)) as lo,
       date_trunc('${unit}', coalesce(?::timestamp, (select max(p) from m), ?::timestamp)) as hi)
     select to_char(s.d, 'YYYY-MM-DD') as date, coalesce(m.c, 0)::float8 as c, m.s
     from g cross join generate_series(g.lo, g.hi, interval '${STEP[granularity]}') as s(d)
     left join m on m.p = s.d order by s.d`,
    [...params, from, to, to, from],
  )
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
