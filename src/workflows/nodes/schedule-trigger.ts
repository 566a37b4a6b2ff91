/**
 * The schedule trigger (docs/api/workflows.md): a cron expression (5 fields, or 6 with
 * seconds first) read in an IANA time zone (src/platform/cron.ts). The workflow schedules
 * (../schedules.ts) fire it at each due time and pass that due time as the node's input
 * `{scheduled_at}`.
 */
import { cronProblem, isTimeZone } from '../../platform/cron.ts'
import { z } from 'zod'
import { isRecord } from '../../access/wire.ts'
import type { NodeType } from '../types.ts'

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
    // The field count first: an expression of the wrong length is the cron's fault whatever the zone.
    const fields = cronProblem(params.cron, 'UTC', [5, 6])
    if (fields?.startsWith('A cron expression has')) {
      ctx.addIssue({ code: 'custom', path: ['cron'], message: fields })
      return
    }
    if (!isTimeZone(params.timezone)) {
      ctx.addIssue({ code: 'custom', path: ['timezone'], message: `Unknown time zone "${params.timezone.slice(0, 100)}"` })
      return
    }
    const problem = cronProblem(params.cron, params.timezone, [5, 6])
    if (problem) ctx.addIssue({ code: 'custom', path: ['cron'], message: problem })
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
