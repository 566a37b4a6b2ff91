/**
 * The host's own error answers (malformed JSON, oversized or non-JSON bodies, unknown routes)
 * in the body shape of API.md section 2: `{message, code, issues?, request_id}`.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'

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
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
}

const MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Malformed JSON in request body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Empty JSON body; send an object or no Content-Type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
}

/** An error body. */
export function errorBody(status: number, message: string, requestId: string, issues?: unknown[]) {
  return { message, code: CODE_BY_STATUS[status] ?? 'BAD_REQUEST', ...(issues ? { issues } : {}), request_id: requestId }
}

/** Fastify error handler: client faults keep their status, anything else is a logged 500 without details. */
export function handleHostError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
  if (status === 500) request.log.error({ err: error }, 'unhandled error')
  const message =
    status === 500
      ? 'Internal server error'
      : (MESSAGES[error.code] ?? (error instanceof SyntaxError ? MESSAGES.FST_ERR_CTP_INVALID_JSON_BODY : error.message))
  return reply.status(status).send(errorBody(status, message, request.id))
}

/**
 * REST error bodies: trpc-to-openapi writes `{...formatterShape, message, code, issues}`; this
 * flattens the formatter's tRPC `data` into the documented `{message, code, issues, request_id}`.
 * Success bodies pass untouched, so the cost is paid by errors only.
 */
export function flattenRestError(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (reply.statusCode < 400 || typeof payload !== 'string' || !payload.includes('"httpStatus"')) return payload
  const body: unknown = JSON.parse(payload)
  if (typeof body !== 'object' || body === null || !('data' in body) || !('message' in body) || !('code' in body)) return payload
  const data = body.data as { issues?: unknown[] } | null
  const issues = 'issues' in body && Array.isArray(body.issues) ? body.issues : data?.issues
  return JSON.stringify({ message: body.message, code: body.code, ...(issues ? { issues } : {}), request_id: request.id })
}
