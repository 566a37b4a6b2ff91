/**
 * Cron expressions and IANA time zones, for everything that runs on a schedule (command room
 * tasks, docs/api/command-room.md "Schedules"; workflow schedule triggers, docs/api/workflows.md).
 * Expressions are read by the `cron-parser` package in the zone given, so its daylight-saving
 * rules apply everywhere alike: a wall-clock time the spring change skips fires an hour later
 * that day, one the autumn change repeats fires once.
 */
import { CronExpressionParser } from 'cron-parser'

/**
 * True when `zone` is an IANA time zone name this runtime knows (`Europe/Paris`, `UTC`, and the
 * IANA aliases such as `US/Eastern`); fixed offsets (`+01:00`), which `Intl` also takes, are not
 * zone names.
 */
export function isTimeZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/**
 * The first time `cron` (five fields, or six with seconds first) matches in `timezone` strictly
 * after `after`.
 * @throws Error (cron-parser's, with its message) when the expression does not parse or never
 *   matches (February 30th).
 */
export function cronAfter(cron: string, timezone: string, after: Date): Date {
  return CronExpressionParser.parse(cron, { tz: timezone, currentDate: after }).next().toDate()
}

/**
 * Why `expression` is not a usable cron expression in `timezone`, or null when it is: it must
 * have one of `fieldCounts` fields (default: five), parse, and match at least once.
 */
export function cronProblem(expression: string, timezone: string, fieldCounts: readonly number[] = [5]): string | null {
  const fields = expression.trim().split(/\s+/).length
  if (!fieldCounts.includes(fields)) {
    const allowed = fieldCounts.length === 1 && fieldCounts[0] === 5 ? 'five fields (minute hour day month weekday)' : `${fieldCounts.join(' or ')} fields`
    return `A cron expression has ${allowed}, not ${fields}`
  }
  try {
    cronAfter(expression, timezone, new Date())
    return null
  } catch (error) {
    return `Invalid cron expression: ${error instanceof Error ? error.message : 'it does not parse'}`
  }
}
