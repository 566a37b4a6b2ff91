/**
 * Assertions and constants shared by the test files: the documented REST error body
 * (docs/api/conventions.md, "Errors"), validation issues on both surfaces, and wire formats.
 */
import { createHash } from 'node:crypto'
import { TRPCError } from '@trpc/server'
import { expect } from 'vitest'
import { VALIDATION_MESSAGE } from '../../src/trpc/errors.ts'
import type { HttpResult } from './app.ts'

/** Service keys configured by createTestApp (SERVICE_KEYS). */
export const ACME_KEY = 'acme-service-key-0123456789'
export const GLOBEX_KEY = 'globex-service-key-0123456789'

/** A timestamp as the service writes it: UTC, milliseconds, `Z`. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** Any ISO 8601 UTC timestamp with `Z`. */
export const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Keys of the specification's User shape. */
export const USER_KEYS = [
  'created_at',
  'email',
  'first_name',
  'id',
  'last_name',
  'name',
  'primary_workspace',
  'profile_photo_url',
  'service_id',
  'updated_at',
]

/** Keys of the specification's Workspace shape, top-level or nested (`user` null when nested). */
export const WORKSPACE_KEYS = [
  'created_at',
  'is_onboarded',
  'is_owner',
  'metadata',
  'name',
  'profile_photo_url',
  'service_id',
  'slug',
  'updated_at',
  'user',
  'uuid',
]

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex')

/**
 * Asserts the documented REST error body `{message, code, issues?, request_id}`: `issues` is
 * there exactly on validation errors, and `request_id` equals the X-Request-Id header.
 */
export function expectErrorBody(res: HttpResult, status: number, code: string, message?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  expect(Object.keys(res.body).sort()).toEqual(
    message === VALIDATION_MESSAGE ? ['code', 'issues', 'message', 'request_id'] : ['code', 'message', 'request_id'],
  )
  expect(res.body.code).toBe(code)
  expect(typeof res.body.message).toBe('string')
  expect(res.body.request_id).toBe(res.headers.get('x-request-id'))
  if (message !== undefined) expect(res.body.message).toBe(message)
}

/** The distinct issue paths, in order (zod may report one field twice, e.g. wrong type and too long). */
export const distinctPaths = (issues: { path: unknown }[]) =>
  [...new Set(issues.map((issue) => JSON.stringify(issue.path)))].map((path) => JSON.parse(path))

/** Asserts a REST validation error whose issues name exactly these paths. */
export function expectIssues(res: HttpResult, paths: (string | number)[][]): void {
  expectErrorBody(res, 400, 'BAD_REQUEST', VALIDATION_MESSAGE)
  expect(distinctPaths(res.body.issues)).toEqual(paths)
  for (const issue of res.body.issues) expect(typeof issue.message).toBe('string')
}

/** The `issues[].path` of a REST error body, each joined with dots. */
export const dottedIssuePaths = (res: HttpResult): string[] =>
  (res.body?.issues ?? []).map((issue: { path: (string | number)[] }) => issue.path.join('.'))

/** A REST 400 whose issues name `path` (dotted), among others. */
export function expectInvalid(res: HttpResult, path: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400)
  expect(res.body.code).toBe('BAD_REQUEST')
  expect(dottedIssuePaths(res)).toContain(path)
}

/** A REST answer with this status and tRPC code. */
export function expectStatus(res: HttpResult, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body.code).toBe(code)
}

/** The TRPCError a caller promise rejects with. */
export async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(
    () => new Error('expected the call to fail'),
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(TRPCError)
  return error as TRPCError
}

/** Distinct paths of the zod issues carried by a BAD_REQUEST TRPCError. */
export function issuePaths(error: TRPCError): unknown[] {
  expect(error.code).toBe('BAD_REQUEST')
  const cause = error.cause as { issues?: { path: unknown }[] } | undefined
  return distinctPaths(cause?.issues ?? [])
}

/**
 * The check of a 404 `<label> not found` that says nothing of the hidden row: none of its uuid,
 * name or slug appears in the body (docs/api/tenancy.md: another tenant's resource).
 */
export function hiddenCheck(label: string): (res: HttpResult, hidden: { uuid: string; name: string; slug?: string }) => void {
  return (res, hidden) => {
    expectErrorBody(res, 404, 'NOT_FOUND', `${label} not found`)
    const text = JSON.stringify(res.body)
    for (const value of [hidden.uuid, hidden.name, hidden.slug]) if (value) expect(text).not.toContain(value)
  }
}
