/**
 * The OpenAI-compatible API (docs/api/openai.md) as plain Fastify routes under `/api/v1/openai`:
 * `GET models`, `POST chat/completions` and `POST responses`, streaming or not, so an OpenAI SDK
 * works with only its `baseURL` and `apiKey` changed. The API key is a bearer token, checked as
 * `workspaceProcedure` checks it (./route-auth.ts: the token's workspace or X-Workspace-UUID); a
 * run is a write, so a read-only token may list models but not run them (403). Every error,
 * from authentication to an unknown path under the prefix, is answered in OpenAI's error shape
 * `{"error": {message, type, param, code}}` with OpenAI's status. The work is done by
 * src/interop/openai-compat.service.ts; a stream follows the run's event log
 * (src/interop/openai-compat.stream.ts).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { z } from 'zod'
import { AppError, BudgetExceededError, TooManyRequestsError, ValidationError, databaseUnavailable } from '../platform/errors.ts'
import { ChatCompletionRequest, paramOf, ResponseRequest } from '../interop/index.ts'
import { toChatCompletion, toResponse, type OpenAiErrorObject } from '../interop/index.ts'
import { openai } from '../interop/index.ts'
import { chatFrames, responseFrames, type SseFrame } from '../interop/index.ts'
import type { CreateContext } from './request-context.ts'
import { authorize, contextOf } from './route-auth.ts'

/** Milliseconds between keep-alive comments of a stream. */
const KEEP_ALIVE_MS = 15_000

/** What the routes need from the host. */
export interface OpenAiRoutesOptions {
  createContext: CreateContext
  /** Aborted when the host starts draining: a stream in progress is told so and ends. */
  draining?: AbortSignal
}

/** OpenAI's error `type` for a status. */
const TYPE_BY_STATUS: Record<number, string> = { 401: 'invalid_request_error', 403: 'invalid_request_error', 404: 'invalid_request_error', 429: 'rate_limit_error' }
/** OpenAI's error `code` for a status, when the error names none. */
const CODE_BY_STATUS: Record<number, string> = {
  401: 'invalid_api_key',
  403: 'permission_denied',
  404: 'not_found',
  409: 'conflict',
  413: 'request_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limit_exceeded',
  502: 'upstream_error',
  503: 'service_unavailable',
  504: 'upstream_timeout',
}

/** An error as OpenAI answers it: status and `{message, type, param, code}`. */
function toOpenAiError(error: unknown): { status: number; body: OpenAiErrorObject } {
  const named = error instanceof AppError ? error : (databaseUnavailable(error) ?? error)
  if (named instanceof AppError) {
    const status = named.status
    const param = named instanceof ValidationError ? paramOf(named.issues[0]?.path ?? []) || null : null
    const code =
      named instanceof openai.ModelNotFoundError ? 'model_not_found' : named instanceof openai.OpenAiParamError ? named.code : named instanceof ValidationError ? 'invalid_value' : (CODE_BY_STATUS[status] ?? null)
    const message = named instanceof ValidationError ? (named.issues[0]?.message ?? named.message) : named.message
    // A budget's refusal in OpenAI's words for a spent quota (docs/api/usage-and-budgets.md, "Enforcement").
    if (named instanceof BudgetExceededError) return { status, body: { message, type: 'insufficient_quota', param: null, code: 'budget_exceeded' } }
    const type = status >= 500 ? 'server_error' : (TYPE_BY_STATUS[status] ?? 'invalid_request_error')
    return { status, body: { message, type, param: named instanceof openai.ModelNotFoundError ? 'model' : param, code } }
  }
  const fastify = error as Partial<FastifyError>
  if (fastify.statusCode && fastify.statusCode >= 400 && fastify.statusCode < 500) {
    const message = fastify.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError ? 'We could not parse the JSON body of your request.' : (fastify.message ?? 'Bad request')
    return { status: fastify.statusCode, body: { message, type: 'invalid_request_error', param: null, code: CODE_BY_STATUS[fastify.statusCode] ?? null } }
  }
  return { status: 500, body: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } }
}

/** Error handler of the scope: every error in OpenAI's shape. */
function handleOpenAiError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { status, body } = toOpenAiError(error)
  if (status === 500) request.log.error({ err: error }, 'unhandled error')
  if (status === 503) void reply.header('retry-after', '1')
  if (error instanceof TooManyRequestsError && error.retryAfterSeconds !== null) void reply.header('retry-after', String(error.retryAfterSeconds))
  // The SDKs retry a 429 by default; a budget's refusal answers the same until its period ends (or someone raises it).
  if (error instanceof BudgetExceededError) void reply.header('x-should-retry', 'false')
  return reply.status(status).header('x-request-id', request.id).send({ error: body })
}

/**
 * For a value that matches no branch of a union (`content`: a string or parts), the problem of the
 * branch that went deepest, with the full path: "Only text content parts are supported" at
 * `messages[0].content[0].type` says more than "Invalid input" at `messages[0].content`.
 */
function deepestIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || issue.input === undefined) return issue
  // A branch of the value's own type (not an invalid_type) that went deepest says the most.
  const rank = (found: z.core.$ZodIssue) => found.path.length * 2 + (found.code === 'invalid_type' ? 0 : 1)
  let best: z.core.$ZodIssue | undefined
  for (const branch of issue.errors) {
    const first = branch[0]
    if (first && (!best || rank(first) > rank(best))) best = first
  }
  return best && rank(best) > 0 ? deepestIssue({ ...best, path: [...issue.path, ...best.path] }) : issue
}

/**
 * The body parsed by `schema`; the first problem as a 400 naming its field in OpenAI's notation
 * (`messages[0].role`); an unknown field as OpenAI's "Unrecognized request argument".
 */
function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new openai.OpenAiParamError([], 'Send a JSON object body (Content-Type: application/json)', 'invalid_body')
  }
  const parsed = schema.safeParse(body, { reportInput: true })
  if (parsed.success) return parsed.data
  const issue = deepestIssue(parsed.error.issues[0])
  const path = issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]
    throw new openai.OpenAiParamError([...path, key], `Unrecognized request argument supplied: ${key}`, 'unknown_parameter')
  }
  const missing = (issue.code === 'invalid_type' || issue.code === 'invalid_union') && issue.input === undefined
  throw new openai.OpenAiParamError(path, missing ? `Missing required parameter: '${paramOf(path)}'.` : issue.message, missing ? 'missing_required_parameter' : 'invalid_value')
}

/**
 * Sends `frames` as Server-Sent Events (`event:` when named, `data:` JSON or `[DONE]`), with a
 * keep-alive comment every 15 s. A client that goes away stops the following (the run goes on,
 * stored, as any run); a host that drains ends the stream with an error frame.
 */
async function sendStream(request: FastifyRequest, reply: FastifyReply, frames: (signal: AbortSignal) => AsyncGenerator<SseFrame>, draining?: AbortSignal) {
  const gone = new AbortController()
  const stop = draining ? AbortSignal.any([gone.signal, draining]) : gone.signal
  reply.hijack()
  const res = reply.raw
  // Headers set on the reply before it was hijacked (X-Run-UUID, X-Thread-UUID) reach the client
  // only when written here: a hijacked reply sends none of its own.
  const set = Object.entries(reply.getHeaders()).filter((entry): entry is [string, string | number | string[]] => entry[1] !== undefined)
  res.writeHead(200, {
    ...Object.fromEntries(set),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
  })
  res.flushHeaders()
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS)
  const onClose = () => gone.abort()
  res.on('close', onClose)
  try {
    for await (const frame of frames(stop)) {
      const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data)
      res.write(`${frame.event ? `event: ${frame.event}\n` : ''}data: ${data}\n\n`)
    }
    if (draining?.aborted && !gone.signal.aborted) {
      const error = { message: 'The service is shutting down; the run goes on and is stored', type: 'server_error', param: null, code: 'service_unavailable' }
      res.write(`event: error\ndata: ${JSON.stringify({ error })}\n\n`)
    }
  } catch (error) {
    if (!gone.signal.aborted) {
      request.log.error({ err: error }, 'openai stream failed')
      res.write(`event: error\ndata: ${JSON.stringify({ error: toOpenAiError(error).body })}\n\n`)
    }
  } finally {
    clearInterval(keepAlive)
    res.off('close', onClose)
    res.end()
  }
}

/** Names the run's thread and run in headers (docs/api/openai.md, "Threads"). */
function runHeaders(reply: FastifyReply, run: openai.StartedRun): void {
  void reply.header('x-run-uuid', run.ref.runUuid)
  if (run.ref.threadUuid) void reply.header('x-thread-uuid', run.ref.threadUuid)
}

/** Registers the routes (with the prefix `/api/v1/openai`) and their error and not-found answers. */
export async function openAiRoutes(scope: FastifyInstance, options: OpenAiRoutesOptions): Promise<void> {
  scope.setErrorHandler(handleOpenAiError)
  const caller = (request: FastifyRequest, reply: FastifyReply, write: boolean) => authorize(contextOf(options.createContext, request, reply), write)

  scope.get('/models', async (request, reply) => openai.listModels(await caller(request, reply, false)))
  scope.get<{ Params: { model: string } }>('/models/:model', async (request, reply) =>
    openai.retrieveModel(await caller(request, reply, false), request.params.model),
  )

  scope.post('/chat/completions', async (request, reply) => {
    const ctx = await caller(request, reply, true)
    const body = parseBody(ChatCompletionRequest, request.body)
    const stream = body.stream === true
    const run = await openai.startChat(ctx, body, stream)
    runHeaders(reply, run)
    if (!stream) return toChatCompletion(run.ref, run.result.data.run.output ?? '', run.result.data.usage)
    const includeUsage = body.stream_options?.include_usage === true
    return sendStream(request, reply, (signal) => chatFrames(ctx, run, includeUsage, signal), options.draining)
  })

  scope.post('/responses', async (request, reply) => {
    const ctx = await caller(request, reply, true)
    const body = parseBody(ResponseRequest, request.body)
    const stream = body.stream === true
    const run = await openai.startResponse(ctx, body, stream)
    runHeaders(reply, run)
    const echo = { instructions: body.instructions ?? null, previousResponseId: body.previous_response_id ?? null, metadata: body.metadata ?? {} }
    if (!stream) {
      const { run: stored, usage, approvals } = run.result.data
      return toResponse(run.ref, echo, { status: 'completed', output: stored.output ?? '', usage, approvals })
    }
    return sendStream(request, reply, (signal) => responseFrames(ctx, run, echo, signal), options.draining)
  })

  // Anything else under the prefix (it wins over the REST surface's catch-all): OpenAI's 404.
  scope.all('/*', async (request) => {
    throw Object.assign(new Error(`Unknown request URL: ${request.method} ${request.url.split('?')[0]}`), { statusCode: 404 })
  })
}

