/**
 * `GET /api/v1/audit-events/export` (docs/api/audit.md, "Export"): the workspace's audit events
 * matching the list's filters, newest first, as NDJSON (`application/x-ndjson`, one event per
 * line), streamed as the log is read, so an export of any size holds one batch in memory. A plain
 * route, as the run event stream is: a procedure answers one JSON document. It authenticates like
 * `workspaceProcedure` (src/http/route-auth.ts); errors before the first line answer the usual
 * JSON bodies. A client that goes away ends the read.
 */
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { AuditEvent, AuditEventExportInput, auditEvents } from '../audit/index.ts'
import { publicIssue } from '../access/issues.ts'
import { errorBody, handleRouteError } from './errors.ts'
import type { CreateContext } from './request-context.ts'
import { authorize, contextOf } from './route-auth.ts'
import { VALIDATION_MESSAGE } from '../trpc/errors.ts'

/** What the route needs from the host. */
export interface AuditExportRoutesOptions {
  createContext: CreateContext
}

/** The query as the schema takes it: `actor_user_id` a number when it reads as one (else left for the schema to refuse). */
function inputOf(query: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = { ...query }
  const actor = input.actor_user_id
  if (typeof actor === 'string' && /^\d{1,16}$/.test(actor)) input.actor_user_id = Number(actor)
  return input
}

/** Registers the route; errors go through the host's handler (the documented error bodies). */
export async function auditExportRoutes(scope: FastifyInstance, options: AuditExportRoutesOptions): Promise<void> {
  scope.setErrorHandler(handleRouteError)
  scope.get<{ Querystring: Record<string, unknown> }>('/api/v1/audit-events/export', async (request, reply) => {
    const ctx = await authorize(contextOf(options.createContext, request, reply), false)
    const parsed = AuditEventExportInput.safeParse(inputOf(request.query))
    if (!parsed.success) {
      return reply
        .status(400)
        .header('x-request-id', request.id)
        .send(errorBody(400, VALIDATION_MESSAGE, request.id, parsed.error.issues.map(publicIssue)))
    }
    auditEvents.requireExport(ctx)
    const batches = auditEvents.exportEvents(ctx, parsed.data)
    const lines = Readable.from(
      (async function* () {
        for await (const events of batches) yield events.map((event) => `${JSON.stringify(event)}\n`).join('')
      })(),
    )
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-request-id', request.id)
      .send(lines)
  })
}

/** The route in the OpenAPI document (it is no procedure). */
export const AUDIT_EXPORT_OPENAPI_PATHS = {
  '/api/v1/audit-events/export': {
    get: {
      operationId: 'auditEvents-export',
      summary: "Export the workspace's audit events as NDJSON",
      description:
        'Every audit event of the workspace matching the filters of `GET /api/v1/audit-events`, newest first, one JSON ' +
        'event per line (application/x-ndjson), streamed (docs/api/audit.md). Workspace owners and admins only.',
      tags: ['Audit'],
      security: [{ bearerAuth: [] }],
      parameters: [{ $ref: '#/components/parameters/ServiceAuthorization' }],
      requestParams: { query: AuditEventExportInput },
      responses: {
        '200': { description: 'One audit event (AuditEvent) as JSON per line', content: { 'application/x-ndjson': { schema: AuditEvent } } },
        '400': { description: 'A filter that is not valid (named in `issues`)' },
        '401': { description: 'No valid token, or an unknown service key' },
        '403': { description: 'The caller is not an owner or admin of the workspace' },
        '404': { description: 'X-Workspace-UUID names a workspace the caller is not a member of' },
      },
    },
  },
}
