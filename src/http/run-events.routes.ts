/**
 * `GET /api/v1/runs/{run_uuid}/events` (docs/api/runs.md): a run's event log as Server-Sent
 * Events for REST clients. Each event is `id: <seq>` / `event: <type>` / `data: <JSON>`; the
 * stream ends after the run's final event (`run.succeeded`, `run.failed`, `run.canceled`). A
 * client that lost its connection reconnects with `Last-Event-ID` (or `?last_event_id=`) to any
 * API process and gets what it missed: the log is in the database (src/runs/run-log.ts). A comment
 * line every 15 s keeps proxies from closing an idle stream. When the process starts shutting
 * down, each stream gets a `reconnect` event (and `retry: 1000`) and ends: EventSource clients
 * reconnect by themselves, with `Last-Event-ID`, and a load balancer sends them to another
 * process. Errors before the stream starts (401, 404, 400) answer the usual JSON bodies. The
 * stream itself is ./run-event-stream.ts, which run requests asked for a stream answer too.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { ValidationError } from '../platform/errors.ts'
import { notUuidMessage } from '../access/issues.ts'
import { errorBody, handleRouteError } from './errors.ts'
import { UUID_ATTEMPT } from './rest-routes.ts'
import type { CreateContext } from './request-context.ts'
import { authorize, contextOf } from './route-auth.ts'
import { streamRunEvents } from './run-event-stream.ts'
import { RunEvent } from '../runs/index.ts'

const EventId = z.string().regex(/^\d{1,9}$/, 'must be an event id (a whole number)')

/** What the route needs from the host. */
export interface RunEventsRoutesOptions {
  createContext: CreateContext
  /** Aborted when the host starts draining (shutdown): streams are told to reconnect, then end. */
  draining?: AbortSignal
}

/** Registers the route; errors go through the host's handler (the documented error bodies). */
export async function runEventsRoutes(scope: FastifyInstance, options: RunEventsRoutesOptions): Promise<void> {
  scope.setErrorHandler(handleRouteError)
  scope.get<{ Params: { run_uuid: string }; Querystring: { last_event_id?: string } }>(
    '/api/v1/runs/:run_uuid/events',
    async (request, reply) => {
      // The REST surface's rule for a uuid position (src/http/rest-routes.ts): a word is no route, a malformed uuid a 400.
      if (!UUID_ATTEMPT.test(request.params.run_uuid)) return reply.status(404).send(errorBody(404, 'Route not found', request.id))
      const ctx = await authorize(contextOf(options.createContext, request, reply), false)
      if (!z.uuid().safeParse(request.params.run_uuid).success) throw new ValidationError(['run_uuid'], notUuidMessage(['run_uuid']))
      const header = request.headers['last-event-id']
      const raw = (Array.isArray(header) ? header[0] : header) ?? request.query.last_event_id
      let after = 0
      if (raw !== undefined && raw !== '') {
        const parsed = EventId.safeParse(raw)
        if (!parsed.success)
          throw new ValidationError([header === undefined ? 'last_event_id' : 'Last-Event-ID'], 'must be an event id (a whole number)')
        after = Number(parsed.data)
      }
      await streamRunEvents(reply, ctx, request.params.run_uuid, { after, draining: options.draining })
    },
  )
}

/** The route in the OpenAPI document (it is no procedure). */
export const RUN_EVENTS_OPENAPI_PATHS = {
  '/api/v1/runs/{run_uuid}/events': {
    get: {
      operationId: 'runs-events',
      summary: "Follow a run's events as Server-Sent Events (resume with Last-Event-ID)",
      description:
        "Follow a run's events as Server-Sent Events until the run ends (docs/api/runs.md); Last-Event-ID (header or " +
        '`last_event_id`) resumes after that event. Needs a bearer token; a read-only token may call it.',
      tags: ['Runs'],
      security: [{ bearerAuth: [] }],
      parameters: [{ $ref: '#/components/parameters/ServiceAuthorization' }],
      requestParams: {
        path: z.object({ run_uuid: z.uuid() }),
        query: z.object({ last_event_id: z.string().optional() }),
        header: z.object({ 'last-event-id': z.string().optional() }),
      },
      responses: {
        '200': {
          description: 'Server-Sent Events: `id:` the sequence number, `event:` the type, `data:` the event (RunEvent) as JSON',
          content: { 'text/event-stream': { schema: RunEvent } },
        },
        '400': { description: 'A malformed run uuid or event id' },
        '401': { description: 'No valid token, or an unknown service key' },
        '404': { description: 'No run of the caller has this uuid' },
      },
    },
  },
}
