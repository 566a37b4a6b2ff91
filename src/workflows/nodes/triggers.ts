/**
 * The webhook and manual triggers (docs/api/workflows.md): they start a graph and
 * answer what triggered them unchanged. The webhook's input is `{method, headers, query, body}`
 * of the request, the manual run's its `input`; the executor supplies both.
 */
import { z } from 'zod'
import { text } from '../../access/wire.ts'
import type { NodeType } from '../types.ts'

/** Parameters of both triggers: an optional note for editors. */
const TriggerParams = z.strictObject({
  description: text(1000).optional().meta({ description: 'A note for editors; not used when running' }),
})
type TTriggerParams = z.infer<typeof TriggerParams>

/** `webhook_trigger`: started by a request to the workflow's webhook URL; output = `{method, headers, query, body}`. */
export const webhookTrigger: NodeType<TTriggerParams> = {
  type: 'webhook_trigger',
  label: 'Webhook trigger',
  description: 'Starts the workflow when its webhook URL is called; outputs {method, headers, query, body} of the request.',
  kind: 'trigger',
  instant: true,
  parameters: TriggerParams,
  outputs: () => null,
  // A missing input is stored as null: outputs are JSON.
  execute: async ({ input }) => ({ output: input ?? null }),
}

/** `manual_trigger`: started by a user's run request; output = the run's `input`. */
export const manualTrigger: NodeType<TTriggerParams> = {
  type: 'manual_trigger',
  label: 'Manual trigger',
  description: 'Starts the workflow when a user runs it; outputs the input of the run request.',
  kind: 'trigger',
  instant: true,
  parameters: TriggerParams,
  outputs: () => null,
  execute: async ({ input }) => ({ output: input ?? null }),
}
