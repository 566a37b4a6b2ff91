/**
 * Error mapping and formatting (docs/api/conventions.md, "Errors").
 *
 * Services throw the named errors of `src/platform/errors.ts`; {@link toTRPCError} turns them into tRPC
 * errors whose code fixes the HTTP status. {@link errorFormatter} gives both surfaces one shape
 * without a stack trace: tRPC clients read `data.code`, `data.issues` and `data.request_id`;
 * the REST layer flattens the same to `{message, code, issues, request_id}` (`errorBodyOf` in src/http/rest-handler.ts).
 */
import { TRPCError, type TRPCDefaultErrorShape } from '@trpc/server'
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc'
import { ZodError, ZodRealError } from 'zod'
import { DriverException, UniqueConstraintViolationException } from '@mikro-orm/core'
import { AppError, databaseUnavailable, ServiceUnavailableError, TooManyRequestsError, ValidationError } from '../platform/errors.ts'
import { publicIssue } from '../access/issues.ts'
import type { ErrorIssue } from './root-types.ts'

const CODES: Record<AppError['status'], TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
}

/** Message of every validation error, on both surfaces (trpc-to-openapi writes the same). */
export const VALIDATION_MESSAGE = 'Input validation failed'

/**
 * Maps a thrown error to the TRPCError that decides the response, or undefined to leave it as
 * tRPC made it. PostgreSQL data exceptions (SQLSTATE class 22: bad unicode, out of range) are a
 * 400, since only input can cause them; a unique violation that a service did not foresee is a
 * 409; a lost or unobtainable database connection (`databaseUnavailable`) is a 503 with
 * Retry-After (docs/operations.md, "Database deadlines"), never a 500.
 */
export function toTRPCError(cause: unknown, setHeader: (name: string, value: string) => void): TRPCError | undefined {
  const unavailable = cause instanceof AppError ? undefined : databaseUnavailable(cause)
  if (unavailable) {
    setHeader('Retry-After', String(unavailable.retryAfterSeconds))
    return new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: unavailable.message, cause })
  }
  if (cause instanceof ValidationError) {
    // ZodRealError, not ZodError: zod 4's ZodError is no Error subclass, so TRPCError would copy
    // it into an UnknownCauseError and drop the non-enumerable `issues` (both surfaces lost them).
    return new TRPCError({ code: 'BAD_REQUEST', message: VALIDATION_MESSAGE, cause: new ZodRealError(cause.issues) })
  }
  if ((cause instanceof TooManyRequestsError || cause instanceof ServiceUnavailableError) && cause.retryAfterSeconds !== null)
    setHeader('Retry-After', String(cause.retryAfterSeconds))
  if (cause instanceof AppError) return new TRPCError({ code: CODES[cause.status], message: cause.message, cause })
  if (cause instanceof UniqueConstraintViolationException) {
    return new TRPCError({ code: 'CONFLICT', message: 'The resource conflicts with an existing one', cause })
  }
  if (cause instanceof DriverException && typeof cause.code === 'string' && cause.code.startsWith('22')) {
    return new TRPCError({ code: 'BAD_REQUEST', message: 'The input holds a value the database cannot store', cause })
  }
  return undefined
}

/** The issues of a validation error as clients get them ({@link publicIssue}), or undefined. */
function issuesOf(error: TRPCError): ErrorIssue[] | undefined {
  return error.code === 'BAD_REQUEST' && error.cause instanceof ZodError ? error.cause.issues.map(publicIssue) : undefined
}

interface FormatterInput {
  /** tRPC's own shape; its typed `code` keeps the return a TRPCErrorShape, so `AppRouter` carries it to clients. */
  shape: TRPCDefaultErrorShape
  error: TRPCError
  ctx?: { requestId?: string }
}

/** tRPC error formatter: no stack, no internals of a 500, issues and request id added. */
export function errorFormatter({ shape, error, ctx }: FormatterInput) {
  const issues = issuesOf(error)
  const internal = error.code === 'INTERNAL_SERVER_ERROR'
  return {
    message: issues ? VALIDATION_MESSAGE : internal ? 'Internal server error' : shape.message,
    code: shape.code,
    data: {
      code: shape.data.code,
      httpStatus: shape.data.httpStatus,
      path: shape.data.path,
      issues,
      request_id: ctx?.requestId,
    },
  }
}
