/**
 * The host's own error answers (malformed JSON, oversized or non-JSON bodies, unknown routes)
 * in the body shape of docs/api/conventions.md: `{message, code, issues?, request_id}`.
 */
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, databaseUnavailable, ServiceUnavailableError, TooManyRequestsError, ValidationError } from '../platform/errors.ts'
import { VALIDATION_MESSAGE } from '../trpc/errors.ts'

/** tRPC code for each status the host answers itself. */
export const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  408: 'TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
}

const MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Malformed JSON in request body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Empty JSON body; send an object or no Content-Type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
  // The router's own messages echo the whole path; these do not.
  FST_ERR_BAD_URL: 'Malformed URL: invalid percent-encoding in the path',
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is too long',
}

/** Deepest nesting of arrays and objects a JSON body may have (Ruby's and Rails' default limit). */
export const MAX_JSON_DEPTH = 100

/**
 * Whether a parsed JSON value nests arrays and objects deeper than `limit`. Iterative: the
 * point is to refuse values that recursive code (tRPC re-serializes every body with
 * `JSON.stringify`) would overflow the stack on, answering a 500.
 */
export function jsonDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]]
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [node, depth] = entry
    if (typeof node !== 'object' || node === null) continue
    if (depth > limit) return true
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
  }
  return false
}

/** A JSON body nested deeper than {@link MAX_JSON_DEPTH}: a 400, like malformed JSON. */
export class JsonTooDeepError extends Error {
  override name = 'JsonTooDeepError'
  readonly statusCode = 400
  readonly code = 'ERR_JSON_TOO_DEEP'
  constructor() {
    super(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
  }
}

/**
 * Seconds a client is asked to wait (`Retry-After`) before it sends again a request the host
 * refused while draining for a shutdown (docs/operations.md, "Shutdown").
 */
export const DRAIN_RETRY_AFTER_SECONDS = 5

/**
 * An error body (docs/api/conventions.md, "Errors"). `code` is the tRPC code of a procedure's
 * error; the host's own errors take the one of their status.
 */
export function errorBody(
  status: number,
  message: string,
  requestId: string,
  issues?: unknown[],
  code = CODE_BY_STATUS[status] ?? 'BAD_REQUEST',
) {
  return { message, code, ...(issues ? { issues } : {}), request_id: requestId }
}

/**
 * Fastify error handler: client faults keep their status, a lost database connection is a 503
 * with Retry-After ({@link sendAppError}), anything else is a logged 500 without details.
 */
export function handleHostError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
  if (status === 500 && sendAppError(error, request, reply)) return reply
  if (status === 500) request.log.error({ err: error }, 'unhandled error')
  const message =
    status === 500
      ? 'Internal server error'
      : (MESSAGES[error.code] ?? (error instanceof SyntaxError ? MESSAGES.FST_ERR_CTP_INVALID_JSON_BODY : error.message))
  // Router errors (frameworkErrors) come before the hook that sets the header.
  return reply
    .status(status)
    .header('x-request-id', request.id)
    .send(errorBody(status, message, request.id))
}

/**
 * Errors Node's HTTP parser raises before there is a request (headers or URL over the size limit,
 * a malformed request line): Fastify's default answers a body of its own shape; this answers ours.
 */
export function handleClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const [status, reason, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request headers or URL too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'Request timed out']
        : [400, 'Bad Request', 'Malformed HTTP request']
  const requestId = randomUUID()
  const body = JSON.stringify(errorBody(status, message, requestId))
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}

/**
 * Answers a service's named error (src/platform/errors.ts) thrown in a plain route with its status and
 * body, as the procedures would, and a lost database connection as the 503 with Retry-After of
 * `databaseUnavailable` (logged as a warning, never with the connection's details in the answer);
 * false for any other error.
 */
export function sendAppError(error: unknown, request: FastifyRequest, reply: FastifyReply): boolean {
  const unavailable = error instanceof AppError ? undefined : databaseUnavailable(error)
  if (unavailable) request.log.warn({ err: error }, 'request unavailable')
  const named = unavailable ?? error
  if (!(named instanceof AppError)) return false
  const issues = named instanceof ValidationError ? named.issues : undefined
  if ((named instanceof TooManyRequestsError || named instanceof ServiceUnavailableError) && named.retryAfterSeconds !== null) {
    void reply.header('retry-after', String(named.retryAfterSeconds))
  }
  void reply
    .status(named.status)
    .header('x-request-id', request.id)
    .send(errorBody(named.status, issues ? VALIDATION_MESSAGE : named.message, request.id, issues))
  return true
}

/** Error handler of plain routes: named errors as {@link sendAppError}, the rest as {@link handleHostError}. */
export function handleRouteError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (sendAppError(error, request, reply)) return reply
  return handleHostError(error, request, reply)
}
