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
  abstract readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 502 | 504
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

/** 429: rate limited; `retryAfterSeconds` becomes the Retry-After header. */
export class TooManyRequestsError extends AppError {
  override name = 'TooManyRequestsError'
  readonly status = 429
  constructor(readonly retryAfterSeconds: number) {
    super('Too many attempts, try again later')
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
