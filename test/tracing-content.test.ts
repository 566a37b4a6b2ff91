/**
 * Traces with message content recorded (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`),
 * exported as OTLP JSON to a real receiver (test/helpers/otlp-receiver.ts), and a collector that
 * fails or hangs: requests answer at once and the dropped spans are counted (docs/operations.md,
 * "Traces"). Its own file: tracing is set up once per process, and these settings differ from
 * test/tracing.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startOtlpReceiver, type OtlpReceiver } from './helpers/otlp-receiver.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { droppedSpanCount, flushTracing } from '../src/platform/tracing.ts'

describe('traces with message content and a collector that fails', () => {
  let t: TestApp
  let receiver: OtlpReceiver
  let upstream: Upstream
  let alice: TestUser

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    upstream = await startUpstream()
    t = await createTestApp({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '25',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
    })
    alice = await t.make.user({ name: 'Alice Content' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
    await receiver?.close()
  })

  it('records prompt and answer texts when asked, over OTLP JSON', async () => {
    const agent = (await t.as(alice).agents.create({ name: 'Talker' } as never)).data
    upstream.enqueue({ kind: 'text', text: 'The answer is plain.' })
    const res = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'What is the question?' } })
    expect(res.status).toBe(200)
    const spans = await (async () => {
      await flushTracing()
      await receiver.waitFor((s) => s.traceId === res.body.data.run.trace_id && s.name.startsWith('invoke_agent'))
      return receiver.spans.filter((s) => s.traceId === res.body.data.run.trace_id)
    })()
    const chat = spans.find((s) => s.name.startsWith('chat '))
    expect(chat?.encoding).toBe('json')
    expect(String(chat?.attributes['gen_ai.input.messages'])).toContain('What is the question?')
    expect(String(chat?.attributes['gen_ai.output.messages'])).toContain('The answer is plain.')
  })

  it('answers requests at once while the collector fails or hangs, and counts what it dropped', async () => {
    receiver.mode = 'fail'
    const before = receiver.requests
    for (let i = 0; i < 3; i++) expect((await t.http('GET', '/api/v1/user', { token: alice.token })).status).toBe(200)
    await flushTracing()
    expect(receiver.requests).toBeGreaterThan(before)
    expect(droppedSpanCount()).toBeGreaterThan(0)
    // And on the metrics endpoint (loopback: no token needed).
    const scrape = await t.http('GET', '/metrics')
    const dropped = /^otel_spans_dropped_total (\d+)$/m.exec(String(scrape.body))
    expect(Number(dropped?.[1])).toBe(droppedSpanCount())

    receiver.mode = 'slow'
    receiver.slowMs = 3_000
    const started = performance.now()
    expect((await t.http('GET', '/api/v1/user', { token: alice.token })).status).toBe(200)
    // Exports run beside requests: a collector that hangs does not hold one.
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect((await t.http('GET', '/api/v1/user', { token: alice.token })).status).toBe(200)
    expect(performance.now() - started).toBeLessThan(2_000)
    receiver.mode = 'ok'
  })
})
