/**
 * A2A (Agent2Agent protocol 0.3, docs/api/a2a.md) as plain Fastify routes: every agent the caller
 * may run has a card at `GET /api/v1/a2a/{agent_uuid}/.well-known/agent-card.json` and a JSON-RPC
 * 2.0 endpoint at `POST /api/v1/a2a/{agent_uuid}`. The SDK's `JsonRpcTransportHandler` reads the
 * JSON-RPC request and calls the request handler of src/interop/a2a.service.ts; its Express
 * adapter is not used, this route is the thin Fastify equivalent: a JSON answer, or for
 * `message/stream` and `tasks/resubscribe` Server-Sent Events of one JSON-RPC response each.
 *
 * Authentication is the REST API's bearer token (./route-auth.ts), before anything is read: a
 * missing or bad token is an HTTP 401 with `WWW-Authenticate: Bearer`; an agent the caller may not
 * run (another tenant's, or no agent) is an HTTP 404, card and endpoint alike, with the API's error
 * body. Everything past that is JSON-RPC: errors are JSON-RPC errors in a 200, a body that is not
 * JSON a -32700.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { A2AError, JsonRpcTransportHandler } from '@a2a-js/sdk/server'
import type { JSONRPCResponse } from '@a2a-js/sdk'
import { z } from 'zod'
import { AppError } from '../platform/errors.ts'
import { A2AAgentHandler, agentCard, requireA2aAgent } from '../interop/index.ts'
import type { Config } from '../platform/config.ts'
import { handleRouteError, jsonDeeperThan, MAX_JSON_DEPTH } from './errors.ts'
import type { CreateContext } from './request-context.ts'
import { authorize, contextOf } from './route-auth.ts'

/** Milliseconds between keep-alive comments of a stream. */
const KEEP_ALIVE_MS = 15_000

/** What the routes need from the host. */
export interface A2aRoutesOptions {
  createContext: CreateContext
  config: Config
  /** Aborted when the host starts draining: a stream in progress ends (`tasks/resubscribe` picks it up again). */
  draining?: AbortSignal
}

/** Errors before JSON-RPC: the API's error bodies, and `WWW-Authenticate` with a 401. */
function handleA2aError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError && error.status === 401) void reply.header('www-authenticate', 'Bearer')
  return handleRouteError(error, request, reply)
}

/** The caller's context and the agent of the path. @throws UnauthorizedError, NotFoundError (the agent). */
async function callerAndAgent(options: A2aRoutesOptions, request: FastifyRequest<{ Params: { agent_uuid: string } }>, reply: FastifyReply) {
  const ctx = await authorize(contextOf(options.createContext, request, reply), false)
  return { ctx, agent: await requireA2aAgent(ctx, request.params.agent_uuid) }
}

/** Whether the transport answered a stream. */
const isStream = (answer: unknown): answer is AsyncGenerator<JSONRPCResponse> =>
  typeof (answer as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function'

/**
 * Sends a stream's JSON-RPC responses as Server-Sent Events (`data:` lines), with a keep-alive
 * comment every 15 s; the handler's stream error, if any, is the last event.
 */
async function sendStream(
  request: FastifyRequest,
  reply: FastifyReply,
  stream: AsyncGenerator<JSONRPCResponse>,
  handler: A2AAgentHandler,
  id: unknown,
) {
  reply.hijack()
  const res = reply.raw
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
  })
  res.flushHeaders()
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS)
  try {
    for await (const response of stream) res.write(`data: ${JSON.stringify(response)}\n\n`)
    if (handler.streamError) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, error: handler.streamError.toJSONRPCError() })}\n\n`)
  } catch (error) {
    request.log.error({ err: error }, 'A2A stream failed')
    const failed = A2AError.internalError(`Internal error (request ${request.id})`)
    if (!res.writableEnded) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, error: failed.toJSONRPCError() })}\n\n`)
  } finally {
    clearInterval(keepAlive)
    res.end()
  }
}

/** A JSON-RPC request id as the transport reads it (string, integer or null), else null. */
const idOf = (body: unknown): string | number | null => {
  const id = (body as { id?: unknown } | null)?.id
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null
}

/** Registers the card and the JSON-RPC endpoint. */
export async function a2aRoutes(scope: FastifyInstance, options: A2aRoutesOptions): Promise<void> {
  scope.setErrorHandler(handleA2aError)
  // JSON-RPC reads its own body: a body that is not JSON is a -32700 answer, not the API's 400;
  // another content type is a 415.
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body))
  const baseUrl = options.config.appUrl

  scope.get<{ Params: { agent_uuid: string } }>('/api/v1/a2a/:agent_uuid/.well-known/agent-card.json', async (request, reply) => {
    const { agent } = await callerAndAgent(options, request, reply)
    return agentCard(agent, baseUrl)
  })

  scope.post<{ Params: { agent_uuid: string } }>('/api/v1/a2a/:agent_uuid', async (request, reply) => {
    const { ctx, agent } = await callerAndAgent(options, request, reply)
    let body: unknown
    try {
      body = typeof request.body === 'string' ? JSON.parse(request.body) : request.body
    } catch {
      return { jsonrpc: '2.0', id: null, error: A2AError.parseError('The body is not JSON').toJSONRPCError() }
    }
    // The host's nesting limit (./app.ts): the SDK echoes an invalid `id` as it came, and a deep one
    // would not serialise.
    if (jsonDeeperThan(body, MAX_JSON_DEPTH)) {
      return {
        jsonrpc: '2.0',
        id: null,
        error: A2AError.invalidRequest(`The request is nested deeper than ${MAX_JSON_DEPTH} levels`).toJSONRPCError(),
      }
    }
    const gone = new AbortController()
    const signal = options.draining ? AbortSignal.any([gone.signal, options.draining]) : gone.signal
    const handler = new A2AAgentHandler(ctx, agent, { baseUrl, signal })
    const answer = await new JsonRpcTransportHandler(handler).handle(body)
    if (!isStream(answer)) return answer
    const onClose = () => gone.abort()
    reply.raw.once('close', onClose)
    try {
      await sendStream(request, reply, answer, handler, idOf(body))
    } finally {
      reply.raw.off('close', onClose)
    }
  })
}

const AgentPath = z.object({ agent_uuid: z.uuid() })

/** One JSON-RPC 2.0 response: `result` or `error`. */
const JsonRpcResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number().int(), z.null()]),
    result: z
      .unknown()
      .optional()
      .describe('The Task (or, streamed, a Task, TaskStatusUpdateEvent or TaskArtifactUpdateEvent) of the A2A specification'),
    error: z
      .object({
        code: z
          .number()
          .int()
          .describe(
            '-32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid params (data.field), -32603 internal, -32001 task not found, -32002 task not cancelable, -32003 push notifications not supported, -32005 content type not supported, -32000 refused (data.status)',
          ),
        message: z.string(),
        data: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
  })
  .meta({ id: 'A2AJsonRpcResponse' })

/** An agent card (A2A 0.3): what the service fills in; the specification names the rest. */
const AgentCardSchema = z
  .object({
    protocolVersion: z.string(),
    name: z.string(),
    description: z.string(),
    url: z.url().describe('The JSON-RPC endpoint: POST /api/v1/a2a/{agent_uuid}'),
    preferredTransport: z.literal('JSONRPC'),
    version: z.string().describe("The agent's current version"),
    documentationUrl: z.string().optional(),
    capabilities: z.object({ streaming: z.boolean(), pushNotifications: z.boolean(), stateTransitionHistory: z.boolean() }),
    defaultInputModes: z.array(z.string()),
    defaultOutputModes: z.array(z.string()),
    skills: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        description: z.string(),
        tags: z.array(z.string()),
        inputModes: z.array(z.string()).optional(),
        outputModes: z.array(z.string()).optional(),
      }),
    ),
    securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())),
    security: z.array(z.record(z.string(), z.array(z.string()))),
  })
  .meta({ id: 'A2AAgentCard' })

/** The routes in the OpenAPI document (they are no procedures). */
export const A2A_OPENAPI_PATHS = {
  '/api/v1/a2a/{agent_uuid}/.well-known/agent-card.json': {
    get: {
      operationId: 'a2a-agent-card',
      summary: "An agent's A2A agent card",
      description:
        'The A2A (Agent2Agent 0.3) card of an agent the caller may run (docs/api/a2a.md). Needs a bearer token; a read-only token may read it.',
      tags: ['A2A'],
      security: [{ bearerAuth: [] }],
      requestParams: { path: AgentPath },
      responses: {
        '200': { description: 'The agent card', content: { 'application/json': { schema: AgentCardSchema } } },
        '401': { description: 'No valid token' },
        '404': { description: 'No agent the caller may run has this uuid' },
      },
    },
  },
  '/api/v1/a2a/{agent_uuid}': {
    post: {
      operationId: 'a2a-json-rpc',
      summary: "An agent's A2A JSON-RPC endpoint",
      description:
        'A2A JSON-RPC 2.0 (docs/api/a2a.md): `message/send`, `message/stream` (Server-Sent Events), `tasks/get`, `tasks/cancel`, ' +
        '`tasks/resubscribe` (Server-Sent Events). A task is a run (task id = run uuid), a context a thread. JSON-RPC errors answer 200. ' +
        'Needs a bearer token; a read-only token may read tasks, not send messages or cancel.',
      tags: ['A2A'],
      security: [{ bearerAuth: [] }],
      requestParams: { path: AgentPath },
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: z
              .object({
                jsonrpc: z.literal('2.0'),
                id: z.union([z.string(), z.number().int(), z.null()]).optional(),
                method: z.string().describe('message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe'),
                params: z.record(z.string(), z.unknown()),
              })
              .meta({ id: 'A2AJsonRpcRequest' }),
          },
        },
      },
      responses: {
        '200': {
          description:
            'The JSON-RPC response; for message/stream and tasks/resubscribe, Server-Sent Events whose `data:` is one JSON-RPC response each',
          content: {
            'application/json': { schema: JsonRpcResponse },
            'text/event-stream': { schema: JsonRpcResponse },
          },
        },
        '401': { description: 'No valid token' },
        '404': { description: 'No agent the caller may run has this uuid' },
        '415': { description: 'The body is not application/json' },
      },
    },
  },
}
