/**
 * The schedule trigger (docs/api/workflows.md): a cron expression (5 fields, or 6 with
 * seconds first) read in an IANA time zone, parsed by the `cron-parser` package. The scheduler
 * fires it through {@link nextFireTime}; the executor passes the firing time as the node's input
 * `{scheduled_at}`.
 */
import { CronExpressionParser } from 'cron-parser'
import { z } from 'zod'
import { isRecord } from '../../schemas/wire.ts'
import type { NodeType } from '../types.ts'

/** True when `zone` is a time zone this runtime knows (IANA names such as `Europe/Paris`, and `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/**
 * The first firing of `cron` in `timezone` strictly after `after`.
 * @throws Error (cron-parser's, with its message) when the expression is invalid or never fires.
 */
export function nextFireTime(cron: string, timezone: string, after: Date = new Date()): Date {
  return CronExpressionParser.parse(cron, { tz: timezone, currentDate: after }).next().toDate()
}

const ScheduleParams = z
  .strictObject({
    cron: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: 'A cron expression: 5 fields (minute hour day month weekday), or 6 with seconds first' }),
    timezone: z.string().max(100).default('UTC').meta({ description: 'The IANA time zone the expression is read in' }),
    input: z.record(z.string(), z.unknown()).optional().meta({ description: 'Members added to the output of every firing' }),
  })
  .superRefine((params, ctx) => {
    const fields = params.cron.trim().split(/\s+/).length
    if (fields !== 5 && fields !== 6) {
      ctx.addIssue({ code: 'custom', path: ['cron'], message: `A cron expression has 5 or 6 fields, not ${fields}` })
      return
    }
    if (!isTimeZone(params.timezone)) {
      ctx.addIssue({ code: 'custom', path: ['timezone'], message: `Unknown time zone "${params.timezone.slice(0, 100)}"` })
      return
    }
    try {
      // Computing one firing also refuses expressions that parse but never fire (February 30th).
      nextFireTime(params.cron, params.timezone)
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        path: ['cron'],
        message: `Invalid cron expression: ${error instanceof Error ? error.message : 'it does not parse'}`,
      })
    }
  })
type TScheduleParams = z.infer<typeof ScheduleParams>

/** `schedule_trigger`: output = `{scheduled_at, timezone, ...input}`; `scheduled_at` is now when run by hand. */
export const scheduleTrigger: NodeType<TScheduleParams> = {
  type: 'schedule_trigger',
  label: 'Schedule trigger',
  description: 'Starts the workflow on a cron schedule in a time zone; outputs {scheduled_at, timezone} and the input parameter.',
  kind: 'trigger',
  instant: true,
  parameters: ScheduleParams,
  outputs: () => null,
  execute: async ({ params, input }) => {
    const fired = isRecord(input) && typeof input.scheduled_at === 'string' ? input.scheduled_at : new Date().toISOString()
    return { output: { scheduled_at: fired, timezone: params.timezone, ...params.input } }
  },
}
