/**
 * The inbound workflow webhook as a plain route beside the procedures (docs/api/workflows.md): `POST
 * /api/v1/hooks/{webhook_token}` takes any content type and keeps the raw body (the signature is
 * over those bytes). Bodies over `WEBHOOK_BODY_LIMIT_BYTES` are 413 before anything else runs.
 * What it does is src/workflows/webhooks.service.ts.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFoundError } from '../platform/errors.ts'
import { triggerWebhook } from '../workflows/index.ts'
import type { AppDeps } from '../trpc/context.ts'
import { handleRouteError } from './errors.ts'

/** A webhook token: 64 hex characters (see `webhook_token` in entities/workflow.entity.ts). */
const TOKEN = /^[0-9a-f]{64}$/

/** The route's OpenAPI entry (merged into /openapi.json beside the procedures). */
export const WEBHOOK_OPENAPI_PATHS = {
  '/api/v1/hooks/{webhook_token}': {
    post: {
      operationId: 'hooks-trigger',
      summary: "Trigger a workflow's webhook (the token is the secret; any content type)",
      description:
        "Trigger a workflow's webhook. Public: the token in the path is the secret; a workflow with a webhook secret " +
        'also needs X-Signature (HMAC of the body). Any content type. Answers what a respond-to-webhook node responds, ' +
        'or 202 when the graph has none.',
      tags: ['Workflows'],
      requestParams: {
        path: z.object({ webhook_token: z.string() }),
        header: z.object({ 'x-signature': z.string().optional() }),
      },
      responses: {
        '200': { description: "The execution's output (a graph with no respond-to-webhook node that finishes in time)" },
        '202': {
          description: 'Queued (the graph has no respond-to-webhook node, or the process stopped under it)',
          content: {
            'application/json': {
              schema: z.object({ data: z.object({ execution_uuid: z.uuid(), status: z.literal('queued') }) }).meta({ id: 'WebhookQueued' }),
            },
          },
        },
        '400': { description: 'A body its content type cannot be read as' },
        '401': { description: 'Missing or wrong X-Signature (workflows with a webhook secret)' },
        '404': { description: 'No workflow has this token' },
        '409': { description: 'The workflow is inactive, or its trigger is not a webhook trigger' },
        '413': { description: 'The body is larger than WEBHOOK_BODY_LIMIT_BYTES' },
        '502': { description: 'The execution failed before responding' },
        '504': { description: 'The execution ran past its timeout before responding' },
        // The graph's respond-to-webhook node chooses the status, headers and body itself.
        default: { description: "The respond-to-webhook node's response: the status, headers and body it sets" },
      },
    },
  },
}

/** What the route needs from the host. */
export interface WebhookRoutesOptions {
  deps: AppDeps
}

/** Registers the webhook route in its own scope (its own body parsing and error answers). */
export async function webhookRoutes(scope: FastifyInstance, options: WebhookRoutesOptions): Promise<void> {
  const { deps } = options
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.config.workflows.webhookBodyLimitBytes }, (_request, body, done) =>
    done(null, body),
  )
  scope.setErrorHandler(handleRouteError)

  scope.post<{ Params: { webhook_token: string } }>(
    '/api/v1/hooks/:webhook_token',
    { bodyLimit: deps.config.workflows.webhookBodyLimitBytes },
    async (request, reply) => {
      const token = request.params.webhook_token
      // Same answer as an unknown token: the shape of a token is no secret, but a 400 would say "close".
      if (!TOKEN.test(token)) throw new NotFoundError('Webhook')
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      const answer = await triggerWebhook(deps, token, {
        method: request.method,
        headers: request.headers,
        query: (request.query ?? {}) as Record<string, unknown>,
        body,
        contentType: request.headers['content-type'],
      })
      if (answer.kind === 'json') return reply.status(answer.status).send(answer.body)
      const { status, headers, body: payload } = answer.response
      for (const [name, value] of Object.entries(headers)) void reply.header(name, value)
      if (typeof payload === 'string') {
        if (!reply.hasHeader('content-type')) void reply.type('text/plain; charset=utf-8')
        return reply.status(status).send(payload)
      }
      return reply.status(status).type('application/json').send(JSON.stringify(payload ?? null))
    },
  )
}
