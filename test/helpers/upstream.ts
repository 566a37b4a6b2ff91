/**
 * A local OpenAI-compatible language model server for tests and benchmarks: the real
 * `@ai-sdk/openai` and `@ai-sdk/openai-compatible` clients talk to it over loopback.
 *
 * - `POST /v1/chat/completions`, non-streaming (a `chat.completion`) and streaming
 *   (`stream: true`: Server-Sent Events of `chat.completion.chunk`, tool call deltas, a last
 *   chunk with `usage` when `stream_options.include_usage` is true, then `data: [DONE]`).
 * - `POST /v1/embeddings`: deterministic vectors ({@link EMBEDDING_DIMENSIONS} numbers, each word
 *   of a text hashed into one of them, normalised), so texts that share words are near; replies
 *   queued with `enqueueEmbeddings` (an error status, a slow answer) come first.
 * - `POST /v1/responses` (OpenAI's Responses API), streaming only: a text reply as
 *   `response.*` events, optionally after a provider-executed web search (`web_search` reply).
 *   The request is recorded like the others; the default reply is `Echo: <last user input>`.
 * - `GET /v1/models`: a model list.
 * - Anything else: 404 in OpenAI's error shape. Every request is recorded in `requests`.
 *
 * Replies are queued (`enqueue`) or chosen per request (`respondWith`); the default reply is
 * the text `Echo: <last user message>`. Token counts are estimated (4 characters a token, plus 4
 * a message), deterministic, unless the reply names them. An instant answer costs about 0.1 ms
 * of server CPU (measured with 10,000 keep-alive requests, mostly Node's own HTTP work): no
 * framework, one write per response. `requests` keeps every request: `reset()` between
 * benchmark rounds.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { randomBytes } from 'node:crypto'

/** A recorded request: path (with query), headers as Node parsed them, JSON body (or null). */
export interface UpstreamRequest {
  path: string
  headers: Record<string, string | string[] | undefined>
  body: any
}

/** Token counts of a reply, as OpenAI names them. */
export interface ReplyUsage {
  prompt_tokens: number
  completion_tokens: number
}

/** What the server answers to one chat completion request. */
export type Reply =
  /** An assistant message (`finish_reason: 'stop'`); the default reply is this with `Echo: <last user message>`. */
  | { kind: 'text'; text: string; usage?: ReplyUsage }
  /** Tool calls (`finish_reason: 'tool_calls'`); `arguments` is raw JSON text, invalid on purpose if you like. */
  | { kind: 'tool_calls'; calls: { name: string; arguments: string; id?: string }[]; usage?: ReplyUsage }
  /** An error status; `body` defaults to OpenAI's error shape (a string body is sent as is). */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** 200 with a body that is not JSON (streaming: one broken chunk, then `[DONE]`). */
  | { kind: 'malformed' }
  /**
   * Streaming: sends the first `afterChunks` chunks of the default text stream (never `[DONE]`), then
   * destroys the socket. Non-streaming: sends the start of the JSON body, then destroys the socket.
   */
  | { kind: 'drop'; afterChunks: number }
  /** Waits `delayMs` (stops waiting if the client goes away), then answers `then` (default reply). */
  | { kind: 'slow'; delayMs: number; then?: Reply }
  /** Responses API only: a `web_search_call` the provider ran for `query`, then the text `text`. */
  | { kind: 'web_search'; query: string; text: string }

export interface Upstream {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string
  requests: UpstreamRequest[]
  /** Queue replies for the next requests, in order; when the queue is empty the default text reply is used. */
  enqueue(...replies: Reply[]): void
  /** Replies chosen per request (overrides the queue), e.g. to answer by conversation content. */
  respondWith(fn: ((req: UpstreamRequest) => Reply) | null): void
  /** Queue replies for the next embedding requests (`status`, `slow` or `drop`); when empty, vectors are answered. */
  enqueueEmbeddings(...replies: Reply[]): void
  /** Forgets recorded requests, queued replies and `respondWith`. */
  reset(): void
  /** How many `slow` replies are still waiting (0 once their clients have gone away). */
  pending(): number
  close(): Promise<void>
}

/** Length of the vectors `POST /v1/embeddings` answers. */
export const EMBEDDING_DIMENSIONS = 64

/** The deterministic embedding of `text`: word counts hashed into {@link EMBEDDING_DIMENSIONS} buckets, L2-normalised. */
export function testEmbedding(text: string): number[] {
  const vector = new Array<number>(EMBEDDING_DIMENSIONS).fill(0)
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let hash = 2166136261
    for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 16777619)
    vector[(hash >>> 0) % EMBEDDING_DIMENSIONS] += 1
  }
  const norm = Math.hypot(...vector) || 1
  return vector.map((value) => value / norm)
}

/** Models that `GET /v1/models` lists (chat completions accept any model name and echo it). */
const MODELS = ['gpt-4o-mini', 'gpt-4o', 'local-test-model']
/** Characters of tool call arguments per streamed delta. */
const ARGUMENT_PIECE = 16

/** Per-response values: ids, timestamp, model, estimated prompt tokens. */
interface Ctx {
  id: string
  created: number
  model: string
  promptTokens: number
  includeUsage: boolean
}

/** Text of one message `content`: a string or an array of parts with `text`. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let text = ''
  for (const part of content) if (part && typeof part.text === 'string') text += part.text
  return text
}

/** `Echo: <last user message>`. */
function echo(body: any): string {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : []
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') return `Echo: ${contentText(messages[i].content)}`
  }
  return 'Echo: '
}

/** About 4 characters a token, at least 1. */
const tokens = (chars: number) => Math.max(1, Math.ceil(chars / 4))

/** Estimated prompt tokens: message texts and tool call arguments, plus 4 a message. */
function estimatePrompt(body: any): number {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : []
  let chars = 0
  for (const message of messages) {
    chars += contentText(message?.content).length
    if (Array.isArray(message?.tool_calls)) {
      for (const call of message.tool_calls) chars += String(call?.function?.arguments ?? '').length
    }
  }
  return tokens(chars) + 4 * messages.length
}

function usageOf(ctx: Ctx, completionTokens: number, given?: ReplyUsage) {
  const prompt = given?.prompt_tokens ?? ctx.promptTokens
  const completion = given?.completion_tokens ?? completionTokens
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/** OpenAI's error body for a status. */
function errorBody(status: number): unknown {
  if (status === 429) {
    return { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } }
  }
  if (status === 401) {
    return { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }
  }
  if (status >= 500) {
    return { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } }
  }
  return { error: { message: `Request failed with status ${status}`, type: 'invalid_request_error', param: null, code: null } }
}

type TextOrTools = Extract<Reply, { kind: 'text' | 'tool_calls' }>

/** A non-streaming `chat.completion`. */
function completion(reply: TextOrTools, ctx: Ctx, callId: () => string): string {
  const base = { id: ctx.id, object: 'chat.completion', created: ctx.created, model: ctx.model, system_fingerprint: 'fp_upstream' }
  if (reply.kind === 'text') {
    const message = { role: 'assistant', content: reply.text, refusal: null }
    const choices = [{ index: 0, message, logprobs: null, finish_reason: 'stop' }]
    return JSON.stringify({ ...base, choices, usage: usageOf(ctx, tokens(reply.text.length), reply.usage) })
  }
  let chars = 0
  const toolCalls = reply.calls.map((call) => {
    chars += call.name.length + call.arguments.length
    return { id: call.id ?? callId(), type: 'function', function: { name: call.name, arguments: call.arguments } }
  })
  const message = { role: 'assistant', content: null, tool_calls: toolCalls, refusal: null }
  const choices = [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' }]
  return JSON.stringify({ ...base, choices, usage: usageOf(ctx, tokens(chars), reply.usage) })
}

/** The SSE events of a streamed reply, `[DONE]` included. */
function chunks(reply: TextOrTools, ctx: Ctx, callId: () => string): string[] {
  const head = `{"id":${JSON.stringify(ctx.id)},"object":"chat.completion.chunk","created":${ctx.created},"model":${JSON.stringify(ctx.model)},"system_fingerprint":"fp_upstream","choices":`
  const event = (choices: unknown[], usage?: unknown) =>
    `data: ${head}${JSON.stringify(choices)}${usage ? `,"usage":${JSON.stringify(usage)}` : ''}}\n\n`
  const delta = (value: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta: value,
    logprobs: null,
    finish_reason: finish,
  })
  const events: string[] = []
  let completionTokens: number
  let finish: string
  if (reply.kind === 'text') {
    events.push(event([delta({ role: 'assistant', content: '', refusal: null })]))
    for (const piece of reply.text.split(/(?=\s)/)) if (piece) events.push(event([delta({ content: piece })]))
    completionTokens = tokens(reply.text.length)
    finish = 'stop'
  } else {
    let chars = 0
    reply.calls.forEach((call, index) => {
      chars += call.name.length + call.arguments.length
      const start = { index, id: call.id ?? callId(), type: 'function', function: { name: call.name, arguments: '' } }
      events.push(event([delta(index === 0 ? { role: 'assistant', content: null, tool_calls: [start] } : { tool_calls: [start] })]))
      for (let at = 0; at < call.arguments.length; at += ARGUMENT_PIECE) {
        const piece = call.arguments.slice(at, at + ARGUMENT_PIECE)
        events.push(event([delta({ tool_calls: [{ index, function: { arguments: piece } }] })]))
      }
    })
    completionTokens = tokens(chars)
    finish = 'tool_calls'
  }
  events.push(event([delta({}, finish)]))
  if (ctx.includeUsage) events.push(event([], usageOf(ctx, completionTokens, reply.usage)))
  events.push('data: [DONE]\n\n')
  return events
}

/** The last user input of a Responses API request: `input` as a string, or its last user item's text. */
function responsesEcho(body: any): string {
  if (typeof body?.input === 'string') return `Echo: ${body.input}`
  const items: any[] = Array.isArray(body?.input) ? body.input : []
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i]?.role !== 'user') continue
    const content = items[i].content
    if (typeof content === 'string') return `Echo: ${content}`
    if (Array.isArray(content)) return `Echo: ${content.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('')}`
  }
  return 'Echo: '
}

/** The Server-Sent Events of a streamed Responses API reply: created, the output items, completed. */
function responsesEvents(reply: { text: string; search?: string }, ctx: Ctx): string[] {
  const events: string[] = []
  const send = (value: Record<string, unknown>) => events.push(`event: ${String(value.type)}\ndata: ${JSON.stringify({ ...value, sequence_number: events.length })}\n\n`)
  send({ type: 'response.created', response: { id: ctx.id, created_at: ctx.created, model: ctx.model, service_tier: null } })
  let index = 0
  if (reply.search !== undefined) {
    const id = `ws_${ctx.id}`
    send({ type: 'response.output_item.added', output_index: 0, item: { type: 'web_search_call', id, status: 'in_progress' } })
    send({ type: 'response.output_item.done', output_index: 0, item: { type: 'web_search_call', id, status: 'completed', action: { type: 'search', query: reply.search } } })
    index = 1
  }
  const item = { type: 'message', id: `msg_${ctx.id}` }
  send({ type: 'response.output_item.added', output_index: index, item })
  for (const piece of reply.text.split(/(?=\s)/)) if (piece) send({ type: 'response.output_text.delta', item_id: item.id, output_index: index, delta: piece, logprobs: [] })
  send({ type: 'response.output_item.done', output_index: index, item })
  const usage = { input_tokens: ctx.promptTokens, output_tokens: tokens(reply.text.length), input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } }
  send({ type: 'response.completed', response: { incomplete_details: null, usage, service_tier: null } })
  return events
}

const JSON_HEADERS = { 'content-type': 'application/json' }
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }

/** Starts the server on 127.0.0.1 and an ephemeral port. */
export async function startUpstream(): Promise<Upstream> {
  const requests: UpstreamRequest[] = []
  const queue: Reply[] = []
  const embeddingQueue: Reply[] = []
  const timers = new Set<NodeJS.Timeout>()
  let chooser: ((req: UpstreamRequest) => Reply) | null = null
  const prefix = randomBytes(8).toString('hex')
  let counter = 0
  const nextId = (kind: string) => `${kind}${prefix}${(++counter).toString(36).padStart(8, '0')}`
  const callId = () => nextId('call_')

  /** Answers one reply, after `slow` waits, unless the client went away. */
  function answer(res: ServerResponse, reply: Reply, body: any): void {
    if (res.destroyed) return
    const stream = body?.stream === true
    switch (reply.kind) {
      case 'slow': {
        const timer = setTimeout(() => {
          timers.delete(timer)
          res.off('close', stop)
          answer(res, reply.then ?? { kind: 'text', text: echo(body) }, body)
        }, reply.delayMs)
        const stop = () => {
          clearTimeout(timer)
          timers.delete(timer)
        }
        timers.add(timer)
        res.once('close', stop)
        return
      }
      case 'web_search':
        // Chat completions have no provider-executed search: the text alone.
        answer(res, { kind: 'text', text: reply.text }, body)
        return
      case 'status': {
        const payload = reply.body === undefined ? errorBody(reply.status) : reply.body
        res.writeHead(reply.status, { ...JSON_HEADERS, ...reply.headers })
        res.end(typeof payload === 'string' ? payload : JSON.stringify(payload))
        return
      }
      case 'malformed': {
        if (!stream) {
          res.writeHead(200, JSON_HEADERS)
          res.end('{"id": "chatcmpl-broken", "choices": [{"message": <this is not JSON')
          return
        }
        res.writeHead(200, SSE_HEADERS)
        res.end(
          `data: {"id":"${nextId('chatcmpl-')}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel\n\ndata: [DONE]\n\n`,
        )
        return
      }
      case 'drop': {
        const ctx = context(body)
        if (!stream) {
          res.writeHead(200, JSON_HEADERS)
          res.write(`{"id":"${ctx.id}","object":"chat.completion","choices":[`, () => res.destroy())
          return
        }
        const all = chunks({ kind: 'text', text: echo(body) }, ctx, callId)
        // Never the whole stream: at most every chunk but [DONE], then the socket closes.
        const events = all.slice(0, Math.min(Math.max(0, reply.afterChunks), all.length - 1))
        res.writeHead(200, SSE_HEADERS)
        res.write(events.join('') || ':\n\n', () => res.destroy())
        return
      }
      default: {
        const ctx = context(body)
        if (stream) {
          res.writeHead(200, SSE_HEADERS)
          res.end(chunks(reply, ctx, callId).join(''))
        } else {
          res.writeHead(200, JSON_HEADERS)
          res.end(completion(reply, ctx, callId))
        }
      }
    }
  }

  function context(body: any): Ctx {
    return {
      id: nextId('chatcmpl-'),
      created: Math.floor(Date.now() / 1000),
      model: typeof body?.model === 'string' ? body.model : MODELS[0],
      promptTokens: estimatePrompt(body),
      includeUsage: body?.stream_options?.include_usage === true,
    }
  }

  function route(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const path = req.url ?? '/'
    let body: any = null
    let invalid = false
    if (raw) {
      try {
        body = JSON.parse(raw)
      } catch {
        invalid = true
      }
    }
    const recorded: UpstreamRequest = { path, headers: req.headers, body }
    requests.push(recorded)
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      if (invalid || body === null || typeof body !== 'object') {
        answer(
          res,
          {
            kind: 'status',
            status: 400,
            body: {
              error: {
                message: 'We could not parse the JSON body of your request.',
                type: 'invalid_request_error',
                param: null,
                code: null,
              },
            },
          },
          body,
        )
        return
      }
      const reply = chooser ? chooser(recorded) : (queue.shift() ?? { kind: 'text', text: echo(body) })
      answer(res, reply, body)
      return
    }
    if (req.method === 'POST' && path === '/v1/responses') {
      const reply = chooser ? chooser(recorded) : (queue.shift() ?? { kind: 'text', text: responsesEcho(body) })
      if (reply.kind !== 'text' && reply.kind !== 'web_search') {
        answer(res, reply, body)
        return
      }
      const ctx = { ...context(body), id: nextId('resp_'), promptTokens: tokens(JSON.stringify(body?.input ?? '').length) }
      res.writeHead(200, SSE_HEADERS)
      res.end(responsesEvents(reply.kind === 'text' ? { text: reply.text } : { text: reply.text, search: reply.query }, ctx).join(''))
      return
    }
    if (req.method === 'POST' && path === '/v1/embeddings') {
      const queued = embeddingQueue.shift()
      if (queued) {
        answer(res, queued, body)
        return
      }
      const inputs: string[] = Array.isArray(body?.input) ? body.input.map(String) : [String(body?.input ?? '')]
      const data = inputs.map((input, index) => ({ object: 'embedding', index, embedding: testEmbedding(input) }))
      const tokens = inputs.reduce((sum, input) => sum + Math.ceil(input.length / 4), 0)
      res.writeHead(200, JSON_HEADERS)
      res.end(JSON.stringify({ object: 'list', data, model: body?.model ?? 'text-embedding-3-small', usage: { prompt_tokens: tokens, total_tokens: tokens } }))
      return
    }
    if (req.method === 'GET' && path === '/v1/models') {
      const created = Math.floor(Date.now() / 1000)
      res.writeHead(200, JSON_HEADERS)
      res.end(JSON.stringify({ object: 'list', data: MODELS.map((id) => ({ id, object: 'model', created, owned_by: 'upstream-test' })) }))
      return
    }
    answer(
      res,
      {
        kind: 'status',
        status: 404,
        body: {
          error: { message: `Unknown request URL: ${req.method} ${path}`, type: 'invalid_request_error', param: null, code: 'unknown_url' },
        },
      },
      body,
    )
  }

  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => route(req, res, parts.length === 1 ? parts[0].toString() : Buffer.concat(parts).toString()))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('upstream: no TCP address')
  const port = address.port

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    enqueueEmbeddings: (...replies) => void embeddingQueue.push(...replies),
    respondWith: (fn) => void (chooser = fn),
    pending: () => timers.size,
    reset: () => {
      requests.length = 0
      queue.length = 0
      embeddingQueue.length = 0
      chooser = null
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      }),
  }
}
