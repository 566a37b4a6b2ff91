/**
 * The usage screen's choices and what its charts are drawn from. `GET usage` answers only the
 * groups that had usage (docs/api/usage-and-budgets.md, "Empty groups"): an account, not a
 * series. A chart needs every period of the range, so the periods between the dates are filled in
 * here with zeros, and the rows grouped by period and by agent (user, model, token) are turned
 * into one point per period with a value per agent.
 */
import type { UsageInput, UsageRow } from './api.ts'

export type Period = 'day' | 'week' | 'month'
export type Breakdown = 'agent' | 'user' | 'model' | 'access_token'

export const PERIODS: { value: Period; label: string }[] = [
  { value: 'day', label: 'Day' },
  { value: 'week', label: 'Week' },
  { value: 'month', label: 'Month' },
]

export const BREAKDOWNS: { value: Breakdown; label: string; noun: string }[] = [
  { value: 'agent', label: 'Agent', noun: 'agent' },
  { value: 'user', label: 'User', noun: 'user' },
  { value: 'model', label: 'Model', noun: 'model' },
  { value: 'access_token', label: 'Access token', noun: 'access token' },
]

/** Most series a stacked chart draws; the rest are summed as "Others". */
const MAX_SERIES = 6
const COLORS = ['blue.6', 'teal.6', 'orange.6', 'grape.6', 'yellow.6', 'cyan.6', 'gray.5']

export interface UsageChoices {
  period: Period
  breakdown: Breakdown
  dateFrom: string | null
  dateTo: string | null
  agentUuid: string | null
  userId: string | null
  model: string
}

const isoDay = (date: Date) => date.toISOString().slice(0, 10)

/** The last 30 days, UTC, by day, broken down by agent. */
export function defaultChoices(now = new Date()): UsageChoices {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 29))
  return { period: 'day', breakdown: 'agent', dateFrom: isoDay(from), dateTo: isoDay(now), agentUuid: null, userId: null, model: '' }
}

/** The input of `usage.summary` for `groups`, with the choices' dates and filters. */
export function usageInput(choices: UsageChoices, groups: UsageInput['group_by']): UsageInput {
  return {
    group_by: groups,
    ...(choices.dateFrom ? { date_from: choices.dateFrom } : {}),
    ...(choices.dateTo ? { date_to: choices.dateTo } : {}),
    ...(choices.agentUuid ? { agent_uuid: choices.agentUuid } : {}),
    ...(choices.userId ? { user_id: Number(choices.userId) } : {}),
    ...(choices.model.trim() ? { model: choices.model.trim() } : {}),
  }
}

/** The first day of the period `date` is in (weeks start on Monday), as the service counts them. */
export function periodStart(date: string, period: Period): string {
  const day = new Date(`${date}T00:00:00Z`)
  if (period === 'month') return isoDay(new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1)))
  if (period === 'week') return isoDay(new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86_400_000))
  return date
}

/** Every period start from `from` to `to` (at most 400), or none when either is unknown or they are the wrong way round. */
export function periodsBetween(from: string | null, to: string | null, period: Period): string[] {
  if (!from || !to || from > to) return []
  const result: string[] = []
  let cursor = new Date(`${periodStart(from, period)}T00:00:00Z`)
  while (isoDay(cursor) <= to && result.length < 400) {
    result.push(isoDay(cursor))
    cursor =
      period === 'month'
        ? new Date(Date.UTC(cursor.getUTCFullYear(), cursor.getUTCMonth() + 1, 1))
        : new Date(cursor.getTime() + (period === 'week' ? 7 : 1) * 86_400_000)
  }
  return result
}

/** A row's breakdown key in words: the agent's name, the model's slug; "No agent" and the like for null. */
export function breakdownLabel(row: UsageRow, breakdown: Breakdown): string {
  switch (breakdown) {
    case 'agent':
      return row.agent ? row.agent.name : 'No agent (prompts, generation)'
    case 'user':
      return row.user ? row.user.name : 'No user'
    case 'model':
      return row.model ?? 'Unknown model'
    case 'access_token':
      return row.access_token ? row.access_token.name : 'Sign-in or the service'
  }
}

/** A row's breakdown key as an identity (names may repeat). */
function breakdownId(row: UsageRow, breakdown: Breakdown): string {
  switch (breakdown) {
    case 'agent':
      return row.agent?.uuid ?? '-'
    case 'user':
      return row.user ? String(row.user.id) : '-'
    case 'model':
      return row.model ?? '-'
    case 'access_token':
      return row.access_token?.uuid ?? '-'
  }
}

export type Measure = 'total_tokens' | 'cost'

/**
 * The points of a stacked chart of `measure` per period, one series per agent (user, model,
 * token) of `rows` (grouped by period, then breakdown), the largest first and the rest as
 * "Others"; every period of `periods` present, zero where nothing was spent.
 */
export function stackedSeries(rows: UsageRow[], breakdown: Breakdown, measure: Measure, periods: string[]) {
  const totals = new Map<string, { label: string; sum: number }>()
  for (const row of rows) {
    const id = breakdownId(row, breakdown)
    const entry = totals.get(id) ?? { label: breakdownLabel(row, breakdown), sum: 0 }
    entry.sum += row[measure]
    totals.set(id, entry)
  }
  const ranked = [...totals.entries()].sort((a, b) => b[1].sum - a[1].sum)
  const shown = ranked.slice(0, ranked.length > MAX_SERIES ? MAX_SERIES - 1 : MAX_SERIES)
  const keyOf = new Map(shown.map(([id], index) => [id, `s${index}`]))
  const series = shown.map(([, entry], index) => ({ name: `s${index}`, label: entry.label, color: COLORS[index] }))
  if (ranked.length > shown.length) series.push({ name: 'others', label: 'Others', color: COLORS[COLORS.length - 1] })
  const dates = [...new Set([...periods, ...rows.map((row) => row.date ?? '')])].filter(Boolean).sort()
  const points = new Map(
    dates.map((date) => [
      date,
      Object.fromEntries([['period', date], ...series.map((s) => [s.name, 0])]) as Record<string, string | number>,
    ]),
  )
  for (const row of rows) {
    const point = points.get(row.date ?? '')
    if (!point) continue
    const key = keyOf.get(breakdownId(row, breakdown)) ?? 'others'
    point[key] = Number(point[key]) + row[measure]
  }
  return { data: [...points.values()], series }
}

const costFormat = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 6,
})
const countFormat = new Intl.NumberFormat('en-US')

/** US dollars with up to 6 decimals: `$0.00135`. */
export const formatCost = (value: number) => costFormat.format(value)
export const formatCount = (value: number) => countFormat.format(value)
