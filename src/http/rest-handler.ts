/**
 * The handler behind every REST path (docs/architecture.md, "The HTTP host"): finds the procedure
 * of a method and path in the OpenAPI metadata of `appRouter`, forms its input from the path
 * parameters and the JSON body (or the query string), calls it, and answers its JSON with the
 * status the call chose (docs/api/conventions.md). It does what trpc-to-openapi's own Node
 * handler does, built from the pieces that package exports, with three differences:
 *
 * - the call's `signal` (tRPC's `opts.signal`) aborts when the client disconnects before the
 *   answer is written, and only then (trpc-to-openapi hands procedures no signal);
 * - each procedure's input schema is unwrapped, and its fields marked coercible, once per
 *   procedure rather than on every request;
 * - an answer that carries its own JSON text (the metrics cache's, src/trpc/cache.ts) is sent as
 *   that text instead of being serialised again;
 * - a run procedure (meta `runEventStream`) asked for a stream (`Accept: text/event-stream` or
 *   `stream: true`) is called with `stream: true`, and its answer, once it has started the run, is
 *   the run's events (`streamAnswer`, docs/api/runs.md "One-request streaming"): every refusal
 *   before that is still the usual JSON error.
 */
import { getTRPCErrorShape, TRPCError, type TRPCProcedureType as ProcedureType } from '@trpc/server'
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  coerceSchema,
  createProcedureCache,
  getErrorFromUnknown,
  getInputOutputParsers,
  instanceofZodTypeKind,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  instanceofZodTypeOptional,
  normalizePath,
  TRPC_ERROR_CODE_HTTP_STATUS,
  unwrapZodType,
  zodSupportsCoerce,
  type OpenApiMethod,
  type OpenApiProcedure,
} from 'trpc-to-openapi'
import { appRouter } from '../../routers/index.ts'
import { jsonTextOf } from '../trpc/cache.ts'
import type { Ctx } from '../trpc/context.ts'
import type { Meta } from '../trpc/init.ts'
import { VALIDATION_MESSAGE } from '../trpc/errors.ts'
import { errorBody } from './errors.ts'
import { publicIssue } from '../access/issues.ts'
import { isRecord } from '../access/wire.ts'
import { setRouteTemplate } from './route-template.ts'

/** What the handler needs from the REST plugin. */
export interface RestHandlerOptions {
  /** The context of one call (src/http/request-context.ts). */
  createContext: (request: FastifyRequest, reply: FastifyReply) => Ctx
  /** Told of every failed call, before its answer is written. */
  onError: (error: TRPCError) => void
  /**
   * Answers a run procedure's result as its event stream (src/http/run-event-stream.ts,
   * `runAnswerStream`); without it such calls answer JSON.
   */
  streamAnswer?: (request: FastifyRequest, reply: FastifyReply, ctx: Ctx, data: unknown) => Promise<void>
}

/** How a procedure reads its input, worked out on its first request. */
interface InputPlan {
  /** The procedure takes no input (`z.void()` and the like): the input stays undefined. */
  none: boolean
  /** Fields that are arrays: a query string that names one once still gives an array. */
  arrayFields: string[]
  /** The procedure may answer as a run's event stream (meta `runEventStream`). */
  streams: boolean
}

/** A query string's values as trpc-to-openapi reads them: one value as itself, repeated ones as an array, empty ones left out. */
function queryInput(query: unknown): Record<string, string | string[]> {
  const input: Record<string, string | string[]> = {}
  if (typeof query !== 'object' || query === null) return input
  for (const [key, value] of Object.entries(query)) {
    if (typeof value === 'string' && value) input[key] = value
    else if (Array.isArray(value) && value.length > 0) {
      const values = value.filter((item): item is string => typeof item === 'string')
      input[key] = values.length === 1 ? values[0] : values
    }
  }
  return input
}

/** The methods a procedure may have (trpc-to-openapi's `OpenApiMethod`); the REST route takes these and HEAD. */
export const REST_METHODS: readonly OpenApiMethod[] = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE']

const restMethods: ReadonlySet<string> = new Set(REST_METHODS)
const isRestMethod = (method: string): method is OpenApiMethod => restMethods.has(method)

/** True for GET and DELETE, whose input comes from the query string (trpc-to-openapi's rule). */
const readsQuery = (method: string): boolean => method === 'GET' || method === 'DELETE'

/**
 * The signal of one REST call (docs/architecture.md, "The REST handler"): it aborts when the
 * client disconnects before the answer is written (the response closes without having ended, or
 * had closed already), never after a normal answer. One controller and one listener, where
 * trpc-to-openapi would build a whole WHATWG Request to get a signal.
 */
export function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  const res = reply.raw
  if (res.destroyed && !res.writableEnded) controller.abort()
  else res.once('close', () => res.writableEnded || controller.abort())
  return controller.signal
}

/** Input plans by procedure (see {@link inputPlanOf}). */
const plans = new WeakMap<OpenApiProcedure, InputPlan>()

/**
 * How `procedure` reads its input. Unwrapping its schema builds new schemas for some kinds, and
 * marking fields coercible sets the same flags every time: both once per procedure, on its first
 * REST request (as trpc-to-openapi marks them on each).
 */
function inputPlanOf(procedure: OpenApiProcedure): InputPlan {
  let plan = plans.get(procedure)
  if (plan) return plan
  const schema = unwrapZodType(getInputOutputParsers(procedure).inputParser, true)
  const arrayFields: string[] = []
  if (zodSupportsCoerce && instanceofZodTypeObject(schema)) {
    for (const [key, field] of Object.entries(schema.shape)) {
      const inner = instanceofZodTypeOptional(field) ? field.unwrap() : field
      if (instanceofZodTypeKind(inner, 'array')) arrayFields.push(key)
    }
    coerceSchema(schema)
  }
  plan = {
    none: instanceofZodTypeLikeVoid(schema),
    arrayFields,
    streams: (procedure._def.meta as Meta | undefined)?.runEventStream === true,
  }
  plans.set(procedure, plan)
  return plan
}

/**
 * The raw input of a call: the query string (GET, DELETE) or the JSON body, with the path
 * parameters over it; undefined for a procedure without input.
 * @throws TRPCError UNSUPPORTED_MEDIA_TYPE for a body method whose Content-Type does not start
 *   with `application/json`, case-sensitively as trpc-to-openapi checks it (the REST plugin's hook
 *   has refused other types already).
 */
function inputOf(request: FastifyRequest, method: string, pathInput: Record<string, string>, plan: InputPlan) {
  if (!readsQuery(method)) {
    const type = request.headers['content-type']
    if (!type?.startsWith('application/json')) {
      throw new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: `Unsupported content-type "${type ?? ''}` })
    }
  }
  if (plan.none) return undefined
  if (!readsQuery(method)) {
    const body = request.body
    return { ...(typeof body === 'object' && body !== null ? body : {}), ...pathInput }
  }
  const input: Record<string, unknown> = { ...queryInput(request.query), ...pathInput }
  for (const key of plan.arrayFields) {
    const value = input[key]
    if (value !== undefined && !Array.isArray(value)) input[key] = [value]
  }
  return input
}

/**
 * Whether a call asks for its answer as events: `stream: true`, or `Accept: text/event-stream`
 * without `stream` (which it then sets, so the procedure leaves the run in the background).
 * `stream: false` answers JSON whatever the Accept header says; a `stream` that is no boolean is
 * left for the input schema to refuse.
 */
function asksForStream(request: FastifyRequest, input: Record<string, unknown> | undefined): boolean {
  if (input === undefined) return false
  if (input.stream === undefined && request.headers.accept?.includes('text/event-stream')) input.stream = true
  return input.stream === true
}

/** Writes `body` as JSON with `status`; a cached answer as the JSON text it carries. */
function send(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  if (reply.sent) return reply
  const text = typeof body === 'object' && body !== null ? jsonTextOf(body) : undefined
  return reply
    .status(status)
    .header('content-type', 'application/json')
    .send(text ?? JSON.stringify(body))
}

/**
 * The body of a failed call ({@link errorBody}), built once from the error formatter's shape
 * (src/trpc/errors.ts). Invalid input gets the fixed message, and the formatter's public issues
 * or else zod's own, made public.
 */
function errorBodyOf(
  error: TRPCError,
  status: number,
  requestId: string,
  call: { procedure?: { type: ProcedureType; path: string }; input: unknown; ctx: Ctx | undefined },
) {
  const shape = getTRPCErrorShape({
    config: appRouter._def._config,
    error,
    type: call.procedure?.type ?? 'unknown',
    path: call.procedure?.path,
    input: call.input,
    ctx: call.ctx,
  })
  const invalidInput = error.code === 'BAD_REQUEST' && error.cause instanceof Error && error.cause.name === 'ZodError'
  const zodIssues =
    invalidInput && error.cause && 'issues' in error.cause && Array.isArray(error.cause.issues) ? error.cause.issues : undefined
  const issues = (shape.data.issues ?? zodIssues)?.map((issue: unknown) => (isRecord(issue) ? publicIssue(issue) : issue))
  return errorBody(status, invalidInput ? VALIDATION_MESSAGE : shape.message, requestId, issues, error.code)
}

/**
 * The Fastify handler of the REST surface (module comment). Answers `HEAD` on any path with 204
 * and a path no procedure has with a 404 error body; every other error of a call is answered
 * with its tRPC code's status and the flat error body ({@link errorBodyOf}).
 */
export function restHandler(options: RestHandlerOptions) {
  const procedureAt = createProcedureCache(appRouter)
  return async function handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const method = request.method
    // HEAD is nothing's method: trpc-to-openapi answers it 204 on any path (a warm-up).
    if (method === 'HEAD') return send(reply, 204, undefined)
    const found = isRestMethod(method) ? procedureAt(method, normalizePath(request.url.split('?')[0])) : undefined
    const procedure = found?.procedure
    let input: Record<string, unknown> | undefined
    let ctx: Ctx | undefined
    try {
      if (!procedure || !found) throw new TRPCError({ code: 'NOT_FOUND', message: 'Not found' })
      const template = (procedure.procedure._def.meta as Meta | undefined)?.openapi?.path
      if (template) setRouteTemplate(request, template)
      const plan = inputPlanOf(procedure.procedure)
      input = inputOf(request, method, found.pathInput, plan)
      const streamAnswer = plan.streams && options.streamAnswer && asksForStream(request, input) ? options.streamAnswer : undefined
      ctx = options.createContext(request, reply)
      const given = input
      // The procedure itself rather than callTRPCProcedure: that finds it again by path, and its
      // `router` option would ride along in the copy tRPC makes of the options at every
      // middleware level.
      const data: unknown = await procedure.procedure({
        path: procedure.path,
        getRawInput: async () => given,
        ctx,
        type: procedure.type,
        signal: disconnectSignal(reply),
        batchIndex: 0,
      })
      if (streamAnswer) {
        await streamAnswer(request, reply, ctx, data)
        return reply
      }
      return send(reply, ctx.successStatus ?? 200, data)
    } catch (cause) {
      const error = getErrorFromUnknown(cause)
      options.onError(error)
      const status = TRPC_ERROR_CODE_HTTP_STATUS[error.code] ?? 500
      return send(reply, status, errorBodyOf(error, status, request.id, { procedure, input, ctx }))
    }
  }
}
