/**
 * The respond-to-webhook node (docs/api/workflows.md): answers the caller waiting on
 * the workflow's webhook with a status, headers and a body before the execution ends. Only the
 * first answer counts, and without a waiting caller it does nothing (`NodeContext.respond`).
 */
import { z } from 'zod'
import type { NodeType, WebhookResponse } from '../types.ts'
import { HeaderMap } from './http-request.ts'

const RespondParams = z.strictObject({
  status: z.number().int().min(100).max(599).default(200).meta({ description: 'The HTTP status of the answer' }),
  body: z.unknown().optional().meta({ description: 'Any JSON value (expressions anywhere); default: the input' }),
  headers: HeaderMap.optional(),
})
type TRespondParams = z.infer<typeof RespondParams>

/** `respond_to_webhook`: output = the response sent `{status, headers, body}`. */
export const respondToWebhook: NodeType<TRespondParams> = {
  type: 'respond_to_webhook',
  label: 'Respond to webhook',
  description: 'Answers the webhook caller with a status, headers and a body (default: the input); outputs that response.',
  kind: 'action',
  instant: true,
  parameters: RespondParams,
  outputs: () => null,
  execute: async ({ params, input, respond }) => {
    const headers = Object.fromEntries(Object.entries(params.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]))
    const response: WebhookResponse = { status: params.status, headers, body: params.body === undefined ? (input ?? null) : params.body }
    respond(response)
    return { output: response }
  },
}
