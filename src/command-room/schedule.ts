/**
 * When a command room task is due (docs/api/command-room.md, "Schedules"). Pure: no database, no
 * clock of its own (every function takes `now` or `after`), so the rules are tested directly.
 *
 * - `once`: at `run_at`, then never.
 * - `hourly`, `daily`, `weekly`: `run_at` itself, then every time whose wall-clock minute and
 *   second (daily: and hour; weekly: and weekday) in the task's IANA time zone are `run_at`'s
 *   there. They are read as cron expressions with seconds in that zone, so cron-parser's
 *   daylight-saving rules apply: a daily 09:00 Europe/Paris stays 09:00 local across the change;
 *   a wall-clock time the spring change skips (02:30) fires an hour later that day (03:30); one the
 *   autumn change repeats fires once, at its first occurrence; `hourly` fires every real hour.
 * - a five-field cron expression: every time it matches, read in the task's zone, at or after
 *   `run_at`.
 */
import { cronAfter } from '../platform/cron.ts'

export { cronProblem, isTimeZone } from '../platform/cron.ts'

/** The named schedules; anything else must be a five-field cron expression. */
export const NAMED_SCHEDULES = ['once', 'hourly', 'daily', 'weekly'] as const
export type NamedSchedule = (typeof NAMED_SCHEDULES)[number]

/** What decides a task's due times. */
export interface ScheduleSpec {
  /** `once`, `hourly`, `daily`, `weekly` or a five-field cron expression. */
  schedule: string
  /** An IANA time zone name. */
  timezone: string
  /** The first firing (named schedules), or when the cron schedule starts. */
  runAt: Date
}

const isNamed = (schedule: string): schedule is NamedSchedule => (NAMED_SCHEDULES as readonly string[]).includes(schedule)

/** The wall-clock parts of `at` in `timezone`: second, minute, hour and weekday (0 = Sunday). */
function wallClock(at: Date, timezone: string): { second: number; minute: number; hour: number; weekday: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    weekday: 'short',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(at)
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '0'
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(part('weekday'))
  return { second: Number(part('second')), minute: Number(part('minute')), hour: Number(part('hour')), weekday }
}

/** The cron expression (six fields, seconds first) a repeating schedule follows in its zone; null for `once`. */
export function cronOf(spec: ScheduleSpec): string | null {
  if (!isNamed(spec.schedule)) return spec.schedule
  if (spec.schedule === 'once') return null
  const { second, minute, hour, weekday } = wallClock(spec.runAt, spec.timezone)
  if (spec.schedule === 'hourly') return `${second} ${minute} * * * *`
  if (spec.schedule === 'daily') return `${second} ${minute} ${hour} * * *`
  return `${second} ${minute} ${hour} * * ${weekday}`
}

/**
 * The first due time of `spec` strictly after `after` (a due time equal to `after` is the one
 * that just fired), or null when there is none (a `once` task whose `run_at` is not after it).
 * `run_at` itself is the first due time of the named schedules.
 * @throws Error (cron-parser's) for an expression {@link cronProblem} refuses.
 */
export function nextDueAfter(spec: ScheduleSpec, after: Date): Date | null {
  if (spec.runAt.getTime() > after.getTime()) {
    if (isNamed(spec.schedule)) return spec.runAt
    // A cron schedule starts at run_at: its first match at or after it.
    return cronAfter(spec.schedule, spec.timezone, new Date(spec.runAt.getTime() - 1))
  }
  const cron = cronOf(spec)
  return cron === null ? null : cronAfter(cron, spec.timezone, after)
}

/**
 * The due time an active task waits for at `now`: its first due time at or after `now`. A
 * due time already past (a repeating task created with `run_at` in the past, or resumed after a
 * pause) is not fired late: the schedule goes on from `now`.
 */
export function firstDueAt(spec: ScheduleSpec, now: Date): Date | null {
  return nextDueAfter(spec, new Date(now.getTime() - 1))
}

/**
 * The next due time after a firing of the due time `dueAt` at `now`: missed due times (all
 * processes were down) are not fired one by one, the schedule goes on from the later of the two.
 */
export function dueAfterFiring(spec: ScheduleSpec, dueAt: Date, now: Date): Date | null {
  if (spec.schedule === 'once') return null
  return nextDueAfter(spec, dueAt.getTime() > now.getTime() ? dueAt : now)
}
