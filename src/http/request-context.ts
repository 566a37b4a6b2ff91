/**
 * The request id and the procedure context of one request, shared by the surfaces that call
 * procedures: tRPC over HTTP and WebSocket, and the REST surface (docs/architecture.md).
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RequestMeta } from '../context.ts'
import type { Ctx } from '../trpc/context.ts'

/** What the surfaces call once per request or WebSocket connection (`createContextFactory`). */
export type CreateContext = (meta: RequestMeta) => Ctx

/** tRPC's connectionParams of a WebSocket or SSE subscription, if any. */
export type ConnectionParams = Record<string, string | undefined> | null

/** The request ids a caller may choose (docs/api/conventions.md, "Request ids"). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Reuses a caller's well-formed X-Request-Id, else makes one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}

/** The headers a WebSocket client may pass as connectionParams, lower-cased. */
const WS_HEADERS = ['authorization', 'x-service-authorization', 'x-workspace-uuid'] as const

/** The connectionParams that stand for headers, under their header names; others are ignored. */
export function wsHeaders(params: ConnectionParams): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [key, value] of Object.entries(params ?? {})) {
    const name = key.toLowerCase()
    if ((WS_HEADERS as readonly string[]).includes(name) && typeof value === 'string') headers[name] = value
  }
  return headers
}

/**
 * The context of a procedure call over HTTP. `singleCall` marks a request that is one call (the
 * REST surface), which lets the workspace middleware set its addition in place.
 */
export function contextOfRequest(
  createContext: CreateContext,
  req: FastifyRequest,
  res: FastifyReply,
  singleCall = false,
  connectionParams: ConnectionParams = null,
): Ctx {
  return createContext({
    requestId: req.id,
    ip: req.ip,
    // A browser's EventSource cannot set headers either: SSE subscriptions carry them as tRPC connectionParams.
    headers: connectionParams ? { ...req.headers, ...wsHeaders(connectionParams) } : req.headers,
    setHeader: (name, value) => void res.header(name, value),
    singleCall,
  })
}
