/**
 * The wait node (docs/api/workflows.md): pauses the execution for a number of seconds,
 * in this process, and stops waiting as soon as the execution is canceled or times out.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import { expr } from '../expressions.ts'
import { NodeError, type NodeType } from '../types.ts'

/** Longest wait, in seconds (one day). */
export const MAX_WAIT_SECONDS = 86_400

const WaitParams = z.strictObject({
  seconds: expr(z.number().min(0).max(MAX_WAIT_SECONDS)).meta({
    description: `Seconds to wait, 0..${MAX_WAIT_SECONDS} (fractions allowed)`,
  }),
})
type TWaitParams = z.infer<typeof WaitParams>

/**
 * `wait`: output = input, after `seconds`.
 * @throws NodeError `canceled` (not retryable) as soon as the execution's signal aborts.
 */
export const waitNode: NodeType<TWaitParams> = {
  type: 'wait',
  label: 'Wait',
  description: 'Waits a number of seconds (at most one day), then passes its input on.',
  kind: 'action',
  parameters: WaitParams,
  outputs: () => null,
  execute: async ({ params, input, signal }) => {
    if (typeof params.seconds !== 'number') throw new NodeError('invalid_parameters', 'seconds: the expression must answer a number', false)
    try {
      await sleep(Math.round(params.seconds * 1000), undefined, { signal })
    } catch {
      throw new NodeError('canceled', 'The wait was canceled', false)
    }
    return { output: input ?? null }
  },
}
