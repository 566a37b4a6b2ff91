/**
 * Named errors that services throw (docs/architecture.md, "Rules"). Services know
 * nothing of tRPC or HTTP; `src/trpc/errors.ts` maps each to its tRPC code and so to the status
 * table of docs/api/conventions.md.
 */

/** A field path as zod writes it: `['metadata', 'sources', 0]`. */
export type FieldPath = (string | number)[]

/** One validation problem, in zod's issue shape so both kinds of 400 read the same. */
export interface FieldIssue {
  code: 'custom'
  path: FieldPath
  message: string
}

/** Base of every error a service throws on purpose. */
export abstract class AppError extends Error {
  abstract readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 502 | 503 | 504
}

/** 400: input that passed the schema but fails a service's own check; names the field. */
export class ValidationError extends AppError {
  override name = 'ValidationError'
  readonly status = 400
  readonly issues: FieldIssue[]
  constructor(path: FieldPath, message: string) {
    super(message)
    this.issues = [{ code: 'custom', path, message }]
  }
}

/** 401: missing, unknown, expired or revoked credentials. */
export class UnauthorizedError extends AppError {
  override name = 'UnauthorizedError'
  readonly status = 401
  constructor(message = 'Unauthenticated') {
    super(message)
  }
}

/** 403: the caller can see the resource but may not do this to it. */
export class ForbiddenError extends AppError {
  override name = 'ForbiddenError'
  readonly status = 403
  constructor(message = 'This action is not allowed') {
    super(message)
  }
}

/** 404: no such resource, or one the caller may not see; the message never says which. */
export class NotFoundError extends AppError {
  override name = 'NotFoundError'
  readonly status = 404
  constructor(resource: string) {
    super(`${resource} not found`)
  }
}

/** 409: the request conflicts with the current state. */
export class ConflictError extends AppError {
  override name = 'ConflictError'
  readonly status = 409
}

/** 413: the upload is larger than `UPLOAD_MAX_BYTES`. */
export class PayloadTooLargeError extends AppError {
  override name = 'PayloadTooLargeError'
  readonly status = 413
}

/** 415: the upload's type is not on the allow-list. */
export class UnsupportedMediaTypeError extends AppError {
  override name = 'UnsupportedMediaTypeError'
  readonly status = 415
}

/** 429: rate limited; `retryAfterSeconds` becomes the Retry-After header (none when null: waiting does not help). */
export class TooManyRequestsError extends AppError {
  override name = 'TooManyRequestsError'
  readonly status = 429
  constructor(
    readonly retryAfterSeconds: number | null,
    message = 'Too many attempts, try again later',
  ) {
    super(message)
  }
}

/**
 * 429: an active `block` budget of the run's scope has reached a limit (docs/api/usage-and-budgets.md,
 * "Enforcement"). The message names the budget; `retryAfterSeconds` is the time to the end of its
 * period (null for a `total` budget). Nothing was stored.
 */
export class BudgetExceededError extends TooManyRequestsError {
  override name = 'BudgetExceededError'
  constructor(message: string, retryAfterSeconds: number | null) {
    super(retryAfterSeconds, message)
  }
}

/**
 * 502: a language model provider (or another upstream) failed: an error status, malformed
 * output, a dropped stream. The message says what went wrong
 * upstream and never carries a credential.
 */
export class UpstreamError extends AppError {
  override name = 'UpstreamError'
  readonly status = 502
}

/** 504: the upstream did not answer within its time limit (`LLM_TIMEOUT_MS`). */
export class UpstreamTimeoutError extends AppError {
  override name = 'UpstreamTimeoutError'
  readonly status = 504
}

/**
 * 503: something the request needs cannot be reached now (the database dropped the connection,
 * refused it, or had no free connection within its deadline); `retryAfterSeconds` becomes the
 * Retry-After header. Nothing about the connection is in the message.
 */
export class ServiceUnavailableError extends AppError {
  override name = 'ServiceUnavailableError'
  readonly status = 503
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message)
  }
}

/** Seconds a client of a 503 for a lost database connection is told to wait (`Retry-After`). */
export const DATABASE_RETRY_AFTER_SECONDS = 1

/**
 * SQLSTATEs of a connection the server ended or refused: class 08 (connection exception) is
 * matched by prefix; `57P01` admin shutdown (pg_terminate_backend, a fast shutdown), `57P02`
 * crash shutdown, `57P03` cannot connect now (starting up, recovering), `53300` too many
 * connections.
 */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])

/** Node's socket errors of a server that cannot be reached or dropped the connection. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

/**
 * What `pg` and pg-pool say when a connection ends under a query, cannot be opened within the
 * connect deadline, or no pooled connection frees up within it (their errors carry no code).
 */
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/

/**
 * A {@link ServiceUnavailableError} for an error of the database driver that says the connection
 * was lost or could not be had (see {@link CONNECTION_SQLSTATES}, {@link SOCKET_CODES},
 * {@link CONNECTION_MESSAGES}), else undefined. Reads `code` and `message` only, which `pg`'s
 * errors and MikroORM's wrappers of them (DriverException copies both) carry alike; an error
 * that merely has such an error as its `cause` (a failed `fetch` of a tool) is not one. The
 * request did not complete, and may be sent again once the database answers
 * (docs/operations.md, "Database deadlines").
 */
export function databaseUnavailable(error: unknown): ServiceUnavailableError | undefined {
  if (!(error instanceof Error)) return undefined
  const code = (error as { code?: unknown }).code
  const lost =
    typeof code === 'string'
      ? code.startsWith('08') || CONNECTION_SQLSTATES.has(code) || SOCKET_CODES.has(code)
      : CONNECTION_MESSAGES.test(error.message)
  return lost ? new ServiceUnavailableError('The database is unavailable; retry shortly', DATABASE_RETRY_AFTER_SECONDS) : undefined
}
