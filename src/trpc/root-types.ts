/**
 * The types the tRPC root is declared with (src/trpc/init.ts), in a file that imports nothing.
 * The routers' emitted declarations, which front ends type-check against
 * (`agent-workspace-service/client`, docs/api/clients.md), name the context, the procedure meta
 * and the error issues through this file only, so a front end's compiler loads it and not the
 * server's context, ORM, driver and zod types.
 *
 * The server completes them by declaration merging: src/trpc/context.ts makes {@link RootContext}
 * the full tRPC context and src/trpc/init.ts adds trpc-to-openapi's route to {@link Meta}. Those
 * files are part of every server compilation and of no front end's, so the server sees the whole
 * types and a front end these.
 */

/** The tRPC context as a client's declarations see it: the request's id (the server's is the whole `Ctx`). */
export interface RootContext {
  /** Matches the X-Request-Id response header. */
  requestId: string
}

/** Procedure metadata beside the REST route: the status of a success (201 for creates, 204 when bodiless) and what it may answer. */
export interface Meta {
  successStatus?: 201 | 202 | 204
  /**
   * The status the procedure sets itself when asked to leave its work in the background
   * (`background: true`); otherwise it answers 200. Declared in the OpenAPI document.
   */
  backgroundStatus?: 202
  /**
   * Starts a run and, on the REST surface, answers its events as Server-Sent Events when asked
   * (`Accept: text/event-stream` or `stream: true`; docs/api/runs.md, "One-request streaming").
   * Declared in the OpenAPI document.
   */
  runEventStream?: boolean
  /** Rate limited (src/trpc/limits.ts): may answer 429. Declared in the OpenAPI document. */
  rateLimited?: boolean
  /**
   * Waits for a language model: may answer 429 when a budget blocks it (docs/api/usage-and-budgets.md),
   * 502 when its provider fails and 504 when it does not answer in time (src/platform/errors.ts).
   * Declared in the OpenAPI document.
   */
  callsModel?: boolean
  /**
   * Error statuses the procedure answers beyond those its kind and facts imply (sign-up's 403
   * when sign-up is turned off). Declared in the OpenAPI document.
   */
  errorStatuses?: readonly (400 | 401 | 403 | 404 | 409 | 422)[]
  /** A read-only token may call this mutation too (logout, the metrics POSTs). */
  readOnlyAllowed?: boolean
  /**
   * A mutation by its verb that stores nothing (the metrics POSTs): it leaves the cached
   * reads of src/platform/read-cache.ts in place, where every other mutation drops them.
   */
  storesNothing?: boolean
  /**
   * A second REST path of the same operation (the specification's `/v1/<resource>/metrics` beside
   * `/api/v1/<resource>/metrics`). trpc-to-openapi gives a procedure one path, so the REST host
   * rewrites this one to `openapi.path` and the OpenAPI document lists it as a copy of the
   * operation (src/http/path-aliases.ts).
   */
  alsoAt?: `/${string}`
}

/** One problem with the input, as a validation error's `data.issues` carries it (zod's issue without `pattern`). */
export interface ErrorIssue {
  /** zod's issue code (`custom` for a service's own check). */
  code: string
  /** Where in the input, as keys and indexes. */
  path: PropertyKey[]
  message: string
  /** The details of the issue's kind (`expected`, `minimum`, ...). */
  [detail: string]: unknown
}
