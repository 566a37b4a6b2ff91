/**
 * `npm run bench:approvals`: runs that wait (docs/api/runs.md, "Approvals", "Busy threads") on
 * PostgreSQL, the service (`npm start`, working the job queue) on a fresh database
 * `aw_bench_approvals_*`, the tests' OpenAI-compatible upstream and tool server in this process.
 *
 *   (r) resume: N runs of an agent whose tool needs approval each stop `awaiting_approval`; for
 *       each, its events are followed (SSE from the last stored event) and the approval is
 *       approved: the time from sending the decision to receiving `run.resumed`, p50/p99/max, and
 *       to the run's final event.
 *   (q) busy threads: T threads (each made by one run) are each sent 3 messages at once as
 *       background runs (`if_busy: enqueue`, the default); the time until every run has ended,
 *       against the time of 3T runs sent one after another to one thread each. Checks: 3T runs
 *       `succeeded` (none lost), and in every thread the messages alternate user/answer, each
 *       answer echoing the message before it (none interleaved).
 *
 * Targets (docs/benchmarks.md): (r) p50 <= 500 ms, p99 <= 2 s; (q) all 3T runs, none interleaved,
 * none lost, finished within 2x the sequential time. The exit code is 0 whether or not a target is
 * met (a measurement, not a test), 1 on an error.
 *
 * Environment:
 *   BENCH_DATABASE_URL         admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_APPROVALS_RUNS       N of (r) (default 50)
 *   BENCH_APPROVALS_THREADS    T of (q) (default 100)
 */
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { startWeatherServer } from '../test/helpers/tool-server.ts'
import { startUpstream, type UpstreamRequest } from '../test/helpers/upstream.ts'
import { type Bench, envNumber, expectOk, fmt, machineOf, runBench, signUp, startService, summarise, writeResults } from './harness.ts'

const settings = { runs: envNumber('BENCH_APPROVALS_RUNS', 50), threads: envNumber('BENCH_APPROVALS_THREADS', 100) }
const RESUME_P50_TARGET_MS = 500
const RESUME_P99_TARGET_MS = 2_000
const QUEUE_RATIO_TARGET = 2

/** The upstream's answer: a weather call to an agent offered tools (until it has the result), else the echo. */
function reply(request: UpstreamRequest) {
  const messages = (request.body?.messages ?? []) as { role: string }[]
  if (request.body?.tools && messages.at(-1)?.role !== 'tool') {
    return { kind: 'tool_calls' as const, calls: [{ name: 'weather', arguments: '{"city":"Oslo"}' }] }
  }
  const last = [...messages].reverse().find((m) => m.role === 'user') as { content?: unknown } | undefined
  return { kind: 'text' as const, text: `Echo: ${typeof last?.content === 'string' ? last.content : 'done'}` }
}

await runBench('aw_bench_approvals', async (bench: Bench) => {
  const upstream = await startUpstream()
  upstream.respondWith(reply)
  const forget = setInterval(() => (upstream.requests.length = 0), 1_000)
  const weather = await startWeatherServer()
  bench.closers.push(async () => clearInterval(forget), () => upstream.close(), () => weather.close())
  const service = await startService(bench, [], {
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: upstream.url,
    TOOL_ALLOW_PRIVATE_NETWORK: 'true',
    WORKER: 'true',
  })
  const api = `${service.url}/api/v1`
  const { token } = await signUp(service.url, 'Bench Approver', `approver-${Date.now()}@bench.test`)
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return JSON.parse((await expectOk(response, `${method} ${path}`)).toString('utf8'))
  }
  const tool = (
    await call('POST', '/tools', {
      name: 'Weather',
      method: 'GET',
      url: `${weather.url}/weather?city={{city}}`,
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      requires_approval: true,
    })
  ).data
  const careful = (await call('POST', '/agents', { name: 'Careful', tools: [{ tool_uuid: tool.uuid }] })).data
  const plain = (await call('POST', '/agents', { name: 'Plain' })).data

  // (r) resume latency.
  const resumed: number[] = []
  const finished: number[] = []
  for (let i = 0; i < settings.runs; i += 1) {
    const { data } = await call('POST', `/agents/${careful.uuid}/run`, { input: `Weather ${i}?` })
    if (data.run.status !== 'awaiting_approval') throw new Error(`run ${i} did not wait: ${data.run.status}`)
    const events = await fetch(`${api}/runs/${data.run.uuid}/events`, {
      headers: { authorization: `Bearer ${token}`, 'last-event-id': String(data.run.events_count) },
    })
    const reader = events.body?.getReader()
    if (!reader) throw new Error('no event stream')
    const start = performance.now()
    await call('POST', `/approvals/${data.approvals[0].uuid}/approve`, {})
    let text = ''
    const decoder = new TextDecoder()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      if (resumed.length === i && text.includes('event: run.resumed')) resumed.push(performance.now() - start)
      if (text.includes('event: run.succeeded') || text.includes('event: run.failed')) break
    }
    finished.push(performance.now() - start)
    await reader.cancel()
    if (resumed.length !== i + 1) throw new Error(`run ${i}: no run.resumed event`)
  }
  const resume = summarise(resumed)
  const finish = summarise(finished)

  // (q) busy threads: T threads, 3 messages each at once.
  const threads: string[] = []
  for (let i = 0; i < settings.threads; i += 1) threads.push((await call('POST', `/agents/${plain.uuid}/run`, { input: `start ${i}` })).data.run.thread_uuid)
  const sequentialStart = performance.now()
  for (let i = 0; i < settings.threads * 3; i += 1) await call('POST', `/threads/${threads[i % settings.threads]}/run`, { content: `seq ${i}` })
  const sequentialMs = performance.now() - sequentialStart
  const queuedStart = performance.now()
  const started = await Promise.all(
    threads.flatMap((thread) => [1, 2, 3].map((n) => call('POST', `/threads/${thread}/run`, { content: `m${n} of ${thread}`, background: true }))),
  )
  const uuids = started.map((answer) => answer.data.run.uuid as string)
  const db = new pg.Client({ connectionString: bench.databaseUrl })
  await db.connect()
  bench.closers.push(() => db.end())
  const ended = async () => {
    const result = await db.query(
      `select count(*) filter (where status = 'succeeded')::int as ok, count(*) filter (where status in ('queued', 'running'))::int as open,
         count(*)::int as total from runs where uuid = any($1::uuid[])`,
      [uuids],
    )
    return result.rows[0] as { ok: number; open: number; total: number }
  }
  let state = await ended()
  while (state.open > 0) {
    await sleep(100)
    state = await ended()
  }
  const queuedMs = performance.now() - queuedStart
  let interleaved = 0
  for (const thread of threads) {
    const { data } = await call('GET', `/messages?thread_uuid=${thread}&per_page=100`)
    const contents = (data as { role: string; content: string }[]).slice(-6)
    for (let k = 0; k < contents.length; k += 2) {
      const ask = contents[k]
      const answer = contents[k + 1]
      if (ask?.role !== 'user' || answer?.role !== 'assistant' || answer.content !== `Echo: ${ask.content}`) interleaved += 1
    }
  }

  const md = [
    `### Runs that wait (${new Date().toISOString().slice(0, 10)}, PostgreSQL ${bench.postgres})`,
    '',
    '| measure | result | target |',
    '|---|---|---|',
    `| (r) decision -> run.resumed, ${resume.n} runs | p50 ${fmt(resume.p50)} ms, p99 ${fmt(resume.p99)} ms, max ${fmt(resume.max)} ms | p50 <= ${RESUME_P50_TARGET_MS} ms, p99 <= ${RESUME_P99_TARGET_MS} ms |`,
    `| (r) decision -> run.succeeded | p50 ${fmt(finish.p50)} ms, p99 ${fmt(finish.p99)} ms | |`,
    `| (q) ${settings.threads} threads x 3 messages at once | ${state.ok}/${state.total} succeeded in ${fmt(queuedMs)} ms; ${interleaved} out of order | all, none out of order |`,
    `| (q) the same ${settings.threads * 3} runs one after another | ${fmt(sequentialMs)} ms; ratio ${fmt(queuedMs / sequentialMs, 2)} | ratio <= ${QUEUE_RATIO_TARGET} |`,
  ].join('\n')
  console.log(`\n${md}\n`)
  writeResults(['approvals-latest'], { settings, machine: machineOf(bench.postgres), resume, finish, queued: { ...state, ms: queuedMs, interleaved }, sequentialMs }, md)
})
