/**
 * The local OpenAI-compatible server of test/helpers/upstream.ts, driven by the real AI SDK
 * clients (`@ai-sdk/openai`, `@ai-sdk/openai-compatible`) over loopback.
 */
import { createOpenAI } from '@ai-sdk/openai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { APICallError, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

let up: Upstream
let model: ReturnType<ReturnType<typeof createOpenAI>['chat']>

beforeAll(async () => {
  up = await startUpstream()
  model = createOpenAI({ baseURL: up.url, apiKey: 'test' }).chat('gpt-4o-mini')
})
afterAll(() => up.close())
beforeEach(() => up.reset())

/** A weather tool whose calls are recorded. */
function weatherTool(calls: unknown[]) {
  return tool({
    description: 'Current weather in a city',
    inputSchema: jsonSchema<{ city: string }>({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    }),
    execute: async ({ city }) => {
      calls.push(city)
      return { city, celsius: 21 }
    },
  })
}

/** The error a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe('upstream: text replies', () => {
  it('echoes the last user message by default and records the request', async () => {
    const result = await generateText({
      model,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'hello there' },
      ],
    })
    expect(result.text).toBe('Echo: hello there')
    expect(result.finishReason).toBe('stop')
    expect(result.response.id).toMatch(/^chatcmpl-[0-9a-z]+$/)
    expect(up.requests).toHaveLength(1)
    const [request] = up.requests
    expect(request.path).toBe('/v1/chat/completions')
    expect(request.headers.authorization).toBe('Bearer test')
    expect(request.body.model).toBe('gpt-4o-mini')
    expect(request.body.messages[0]).toEqual({ role: 'system', content: 'Be brief.' })
    expect(request.body.stream).toBeUndefined()
  })

  it('reports estimated usage by default and the queued numbers when given', async () => {
    const estimated = await generateText({ model, prompt: 'count me' })
    expect(estimated.usage.inputTokens).toBeGreaterThan(0)
    expect(estimated.usage.outputTokens).toBeGreaterThan(0)
    expect(estimated.usage.totalTokens).toBe(estimated.usage.inputTokens! + estimated.usage.outputTokens!)

    up.enqueue({ kind: 'text', text: 'Exactly.', usage: { prompt_tokens: 120, completion_tokens: 7 } })
    const given = await generateText({ model, prompt: 'count me' })
    expect(given.text).toBe('Exactly.')
    expect(given.usage).toMatchObject({ inputTokens: 120, outputTokens: 7, totalTokens: 127 })
  })

  it('answers queued replies in order, then the default reply', async () => {
    up.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' })
    const texts: string[] = []
    for (const prompt of ['a', 'b', 'c']) texts.push((await generateText({ model, prompt })).text)
    expect(texts).toEqual(['one', 'two', 'Echo: c'])
  })

  it('lets respondWith choose per request, over the queue, until it is cleared', async () => {
    up.enqueue({ kind: 'text', text: 'queued' })
    up.respondWith((req) => ({ kind: 'text', text: `seen ${req.body.messages.length} message(s)` }))
    expect((await generateText({ model, prompt: 'x' })).text).toBe('seen 1 message(s)')
    up.respondWith(null)
    expect((await generateText({ model, prompt: 'x' })).text).toBe('queued')
  })

  it('reset forgets requests, queued replies and respondWith', async () => {
    await generateText({ model, prompt: 'x' })
    up.enqueue({ kind: 'text', text: 'queued' })
    up.respondWith(() => ({ kind: 'text', text: 'chosen' }))
    up.reset()
    expect(up.requests).toEqual([])
    expect((await generateText({ model, prompt: 'after' })).text).toBe('Echo: after')
  })
})

describe('upstream: streaming', () => {
  it('streams text deltas and the usage of the last chunk', async () => {
    up.enqueue({ kind: 'text', text: 'The quick brown fox', usage: { prompt_tokens: 11, completion_tokens: 4 } })
    const result = streamText({ model, prompt: 'go', maxRetries: 0 })
    const deltas: string[] = []
    for await (const delta of result.textStream) deltas.push(delta)
    expect(deltas).toEqual(['The', ' quick', ' brown', ' fox'])
    expect(await result.text).toBe('The quick brown fox')
    expect(await result.finishReason).toBe('stop')
    expect(await result.usage).toMatchObject({ inputTokens: 11, outputTokens: 4, totalTokens: 15 })
    expect(up.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })

  it('writes chat.completion.chunk events, a usage chunk when asked, then [DONE]', async () => {
    const res = await fetch(`${up.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hi' }],
      }),
    })
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const events = (await res.text()).split('\n\n').filter(Boolean)
    expect(events.at(-1)).toBe('data: [DONE]')
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.replace(/^data: /, '')))
    expect(new Set(chunks.map((chunk) => chunk.object))).toEqual(new Set(['chat.completion.chunk']))
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1)
    expect(chunks[0].choices[0].delta.role).toBe('assistant')
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop')
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } })

    const bare = await fetch(`${up.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(await bare.text()).not.toContain('"usage"')
  })

  it('serves @ai-sdk/openai-compatible, streaming and not', async () => {
    const compatible = createOpenAICompatible({ name: 'local', baseURL: up.url, apiKey: 'k', includeUsage: true })
    const chat = compatible.chatModel('llama-3')
    expect((await generateText({ model: chat, prompt: 'plain' })).text).toBe('Echo: plain')
    const streamed = streamText({ model: chat, prompt: 'streamed' })
    expect(await streamed.text).toBe('Echo: streamed')
    expect((await streamed.usage).totalTokens).toBeGreaterThan(0)
    expect(up.requests.map((req) => req.body.model)).toEqual(['llama-3', 'llama-3'])
    expect(up.requests[1].headers.authorization).toBe('Bearer k')
  })
})

describe('upstream: tool calls', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`round-trips a tool call with ${mode}: the second request carries the tool result`, async () => {
      const calls: unknown[] = []
      up.enqueue({ kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Paris, the capital of France"}', id: 'call_abc' }] })
      up.enqueue({ kind: 'text', text: 'It is 21 degrees in Paris.' })
      const options = {
        model,
        prompt: 'Weather in Paris?',
        maxRetries: 0,
        stopWhen: stepCountIs(3),
        tools: { weather: weatherTool(calls) },
      }
      const result = mode === 'generateText' ? await generateText(options) : streamText(options)
      expect(await result.text).toBe('It is 21 degrees in Paris.')
      const steps = await result.steps
      expect(steps).toHaveLength(2)
      expect(steps[0].finishReason).toBe('tool-calls')
      expect(steps[0].toolCalls[0]).toMatchObject({
        toolCallId: 'call_abc',
        toolName: 'weather',
        input: { city: 'Paris, the capital of France' },
      })
      expect(calls).toEqual(['Paris, the capital of France'])

      expect(up.requests).toHaveLength(2)
      expect(up.requests[0].body.tools[0]).toMatchObject({ type: 'function', function: { name: 'weather' } })
      expect(up.requests[1].body.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_abc', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris, the capital of France"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_abc', content: JSON.stringify({ city: 'Paris, the capital of France', celsius: 21 }) },
      ])
    })
  }

  it('gives each call an id when none is queued, and sends invalid arguments as they are', async () => {
    const calls: unknown[] = []
    up.enqueue({ kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":' }] })
    const result = await generateText({ model, prompt: 'x', maxRetries: 0, tools: { weather: weatherTool(calls) } })
    const [call] = result.steps[0].content.filter((part) => part.type === 'tool-call')
    expect(call).toMatchObject({ toolName: 'weather', invalid: true, input: '{"city":' })
    expect(call.toolCallId).toMatch(/^call_[0-9a-z]+$/)
    expect(result.steps[0].content.some((part) => part.type === 'tool-error')).toBe(true)
    expect(calls).toEqual([])
  })

  it('streams several tool calls in one reply', async () => {
    const calls: unknown[] = []
    up.enqueue({
      kind: 'tool_calls',
      calls: [
        { name: 'weather', arguments: '{"city":"Oslo"}' },
        { name: 'weather', arguments: '{"city":"Lima"}' },
      ],
    })
    const result = streamText({ model, prompt: 'x', maxRetries: 0, tools: { weather: weatherTool(calls) } })
    expect((await result.toolCalls).map((call) => call.input)).toEqual([{ city: 'Oslo' }, { city: 'Lima' }])
    expect(await result.finishReason).toBe('tool-calls')
    expect(calls.sort()).toEqual(['Lima', 'Oslo'])
  })
})

describe('upstream: faults', () => {
  it.each([429, 500])('surfaces status %i as an APICallError with that status', async (status) => {
    up.enqueue({ kind: 'status', status, headers: { 'retry-after': '7' } })
    const error = await rejection(generateText({ model, prompt: 'x', maxRetries: 0 }))
    expect(APICallError.isInstance(error)).toBe(true)
    if (!APICallError.isInstance(error)) return
    expect(error.statusCode).toBe(status)
    expect(error.responseHeaders?.['retry-after']).toBe('7')
    expect(error.isRetryable).toBe(true)
    expect(up.requests).toHaveLength(1)
  })

  it('surfaces an error status on a streaming request too, with a custom body', async () => {
    up.enqueue({ kind: 'status', status: 429, body: { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } } })
    const errors: unknown[] = []
    const result = streamText({ model, prompt: 'x', maxRetries: 0, onError: ({ error }) => void errors.push(error) })
    await rejection(Promise.resolve(result.text))
    expect(errors).toHaveLength(1)
    expect(APICallError.isInstance(errors[0]) && errors[0].statusCode).toBe(429)
    expect(APICallError.isInstance(errors[0]) && errors[0].message).toBe('slow down')
  })

  it('surfaces a body that is not JSON as an error', async () => {
    up.enqueue({ kind: 'malformed' })
    const error = await rejection(generateText({ model, prompt: 'x', maxRetries: 0 }))
    expect(APICallError.isInstance(error) && error.message).toBe('Invalid JSON response')
  })

  it('surfaces a broken stream chunk as an error part', async () => {
    up.enqueue({ kind: 'malformed' })
    const errors: unknown[] = []
    const result = streamText({ model, prompt: 'x', maxRetries: 0, onError: ({ error }) => void errors.push(error) })
    const parts: string[] = []
    for await (const part of result.fullStream) parts.push(part.type)
    expect(parts).toContain('error')
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toMatch(/JSON parsing failed/)
  })

  it('surfaces a dropped stream as an error after the chunks sent', async () => {
    up.enqueue({ kind: 'drop', afterChunks: 3 })
    const result = streamText({ model, prompt: 'one two three', maxRetries: 0, onError: () => {} })
    const deltas: string[] = []
    const error = await rejection(
      (async () => {
        for await (const delta of result.textStream) deltas.push(delta)
      })(),
    )
    expect(deltas).toEqual(['Echo:', ' one'])
    expect(APICallError.isInstance(error)).toBe(true)
  })

  it('never completes a dropped stream, even when asked for more chunks than it has', async () => {
    up.enqueue({ kind: 'drop', afterChunks: 1_000 })
    const result = streamText({ model, prompt: 'short', maxRetries: 0, onError: () => {} })
    const error = await rejection(Promise.resolve(result.text))
    expect(error).toBeInstanceOf(Error)
  })

  it('surfaces a dropped non-streaming response as an error', async () => {
    up.enqueue({ kind: 'drop', afterChunks: 0 })
    const error = await rejection(generateText({ model, prompt: 'x', maxRetries: 0 }))
    expect(error).toBeInstanceOf(Error)
  })

  it('answers a slow reply after its delay', async () => {
    up.enqueue({ kind: 'slow', delayMs: 60, then: { kind: 'text', text: 'late' } })
    const started = performance.now()
    expect((await generateText({ model, prompt: 'x' })).text).toBe('late')
    expect(performance.now() - started).toBeGreaterThanOrEqual(55)
    expect(up.pending()).toBe(0)
  })

  it('stops waiting when the client times out', async () => {
    up.enqueue({ kind: 'slow', delayMs: 10_000 })
    const started = performance.now()
    const error = await rejection(generateText({ model, prompt: 'x', maxRetries: 0, timeout: 100 }))
    expect(error).toMatchObject({ name: 'TimeoutError' })
    expect(performance.now() - started).toBeLessThan(2_000)
    await expect.poll(() => up.pending()).toBe(0)
  })

  it('stops waiting when the client aborts a stream', async () => {
    up.enqueue({ kind: 'slow', delayMs: 10_000, then: { kind: 'text', text: 'never' } })
    const controller = new AbortController()
    const result = streamText({ model, prompt: 'x', maxRetries: 0, abortSignal: controller.signal, onError: () => {} })
    await expect.poll(() => up.pending()).toBe(1)
    controller.abort()
    const parts: string[] = []
    for await (const part of result.fullStream) parts.push(part.type)
    expect(parts).toContain('abort')
    await expect.poll(() => up.pending()).toBe(0)
  })
})

describe('upstream: other routes', () => {
  it('lists models at GET /v1/models', async () => {
    const res = await fetch(`${up.url}/models`)
    expect(res.status).toBe(200)
    const body: any = await res.json()
    expect(body.object).toBe('list')
    expect(body.data[0]).toMatchObject({ id: 'gpt-4o-mini', object: 'model' })
    expect(up.requests[0]).toMatchObject({ path: '/v1/models', body: null })
  })

  it('answers 404 for an unknown path and 400 for a body that is not JSON', async () => {
    const missing = await fetch(`${up.url}/audio/speech`, { method: 'POST', body: '{}' })
    expect(missing.status).toBe(404)
    const missingBody: any = await missing.json()
    expect(missingBody.error.code).toBe('unknown_url')
    const broken = await fetch(`${up.url}/chat/completions`, { method: 'POST', body: '{nope' })
    expect(broken.status).toBe(400)
    const brokenBody: any = await broken.json()
    expect(brokenBody.error.type).toBe('invalid_request_error')
  })

  it('answers embeddings with deterministic normalised vectors, near for texts that share words; queued errors first', async () => {
    const ask = (input: unknown) => fetch(`${up.url}/embeddings`, { method: 'POST', body: JSON.stringify({ model: 'text-embedding-3-small', input }) })
    const res = await ask(['liquid argon cools the reactor', 'the reactor is cooled by liquid argon', 'lunch at noon'])
    expect(res.status).toBe(200)
    const body: any = await res.json()
    const [a, b, c] = body.data.map((d: { embedding: number[] }) => d.embedding)
    expect(a).toHaveLength(64)
    const dot = (x: number[], y: number[]) => x.reduce((sum, v, i) => sum + v * y[i], 0)
    expect(dot(a, a)).toBeCloseTo(1, 6)
    expect(dot(a, b)).toBeGreaterThan(dot(a, c))
    const again: any = await (await ask('liquid argon cools the reactor')).json()
    expect(again.data[0].embedding).toEqual(a)
    up.enqueueEmbeddings({ kind: 'status', status: 500 })
    expect((await ask('x')).status).toBe(500)
    expect((await ask('x')).status).toBe(200)
  })

  it('closes while a slow reply is waiting', async () => {
    const other = await startUpstream()
    other.enqueue({ kind: 'slow', delayMs: 60_000 })
    const pending = fetch(`${other.url}/chat/completions`, { method: 'POST', body: '{"messages":[]}' }).catch((error: unknown) => error)
    await expect.poll(() => other.pending()).toBe(1)
    await other.close()
    expect(other.pending()).toBe(0)
    expect(await pending).toBeInstanceOf(Error)
  })
})
