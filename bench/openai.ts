/**
 * `npm run bench:openai`: what the OpenAI-compatible API (docs/api/openai.md) adds to a run of the
 * same agent through the native API, with the local OpenAI-compatible upstream of the tests
 * (bench/runs-upstream.ts, answering at once) as the agent's model, on PostgreSQL (a fresh
 * database `aw_bench_openai_*` on BENCH_DATABASE_URL, dropped at the end), all over 127.0.0.1:
 *
 *   (a) answered when done: `POST /api/v1/openai/chat/completions` against
 *       `POST /api/v1/agents/{uuid}/run`, time to the whole answer;
 *   (b) streamed: `POST /api/v1/openai/chat/completions` with `stream: true`, time to the first
 *       chunk carrying text and to `[DONE]`, against the native one-request stream
 *       (`POST /api/v1/agents/{uuid}/run` with `Accept: text/event-stream`, docs/api/runs.md
 *       "One-request streaming"), time from the POST to the first `text.delta` event and to the
 *       end of the stream.
 *
 * Each pair is measured alternately, request by request (the native one, then the OpenAI one), so
 * a busy machine slows both alike. Every answer is checked (`Echo: <input>`). Target: the OpenAI
 * p50 at most 10% above the native p50, for the whole answer and for the first streamed text.
 * The exit code is 0 whether or not the target is met (a measurement), 1 on an error.
 *
 * Environment: BENCH_OPENAI_SEQUENTIAL (pairs measured, default 150), BENCH_OPENAI_WARMUP
 * (pairs before measuring, default 30), BENCH_DATABASE_URL.
 */
import { CHILD_ENV, envNumber, expectOk, fmt, machineOf, summariseP90, runBench, signUp, startService, writeResults } from './harness.ts'
import { startUpstreamChild } from './processes.ts'

const count = (name: string, fallback: number) => Math.floor(envNumber(name, fallback))
const settings = { sequential: count('BENCH_OPENAI_SEQUENTIAL', 150), warmup: count('BENCH_OPENAI_WARMUP', 30) }
/** The budget: the OpenAI route's p50 at most this far above the native one's. */
const TARGET_RATIO = 1.1
const INPUT = 'What is the weather like in Lisbon today?'
const ANSWER = `Echo: ${INPUT}`

const now = () => performance.now()

interface Api {
  url: string
  token: string
  agentUuid: string
}
const headers = (api: Api) => ({ authorization: `Bearer ${api.token}`, 'content-type': 'application/json' })

/** Reads a Server-Sent Event body: ms (from `start`) to the first event `isFirst` accepts, and to the end; the events' data. */
async function readEvents(response: Response, start: number, isFirst: (data: string) => boolean) {
  let first: number | undefined
  let buffer = ''
  const data: string[] = []
  const decoder = new TextDecoder()
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk, { stream: true })
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const line = event.split('\n').find((l) => l.startsWith('data: '))
      if (!line) continue
      const payload = line.slice(6)
      data.push(payload)
      if (first === undefined && isFirst(payload)) first = now() - start
    }
  }
  return { first: first ?? NaN, full: now() - start, data }
}

/** The native run answered when done. */
async function nativeOnce(api: Api): Promise<number> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${api.agentUuid}/run`, { method: 'POST', headers: headers(api), body: JSON.stringify({ input: INPUT }) })
  const body = JSON.parse((await expectOk(response, 'native run')).toString('utf8')) as { data: { run: { output: string } } }
  if (body.data.run.output !== ANSWER) throw new Error(`native run: unexpected output ${body.data.run.output}`)
  return now() - start
}

/** The chat completion answered when done. */
async function openAiOnce(api: Api): Promise<number> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/openai/chat/completions`, {
    method: 'POST',
    headers: headers(api),
    body: JSON.stringify({ model: api.agentUuid, messages: [{ role: 'user', content: INPUT }] }),
  })
  const body = JSON.parse((await expectOk(response, 'chat completion')).toString('utf8')) as { choices: { message: { content: string } }[] }
  if (body.choices[0].message.content !== ANSWER) throw new Error(`chat completion: unexpected content ${body.choices[0].message.content}`)
  return now() - start
}

/** The native stream: one POST answered as Server-Sent Events, as the OpenAI stream is. */
async function nativeStreamOnce(api: Api): Promise<{ first: number; full: number }> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${api.agentUuid}/run`, {
    method: 'POST',
    headers: { ...headers(api), accept: 'text/event-stream' },
    body: JSON.stringify({ input: INPUT }),
  })
  if (response.status !== 200) throw new Error(`native stream: HTTP ${response.status}`)
  const read = await readEvents(response, start, (payload) => payload.includes('"type":"text.delta"'))
  if (!read.data.at(-1)?.includes('"type":"run.succeeded"')) throw new Error('native stream: no run.succeeded')
  return read
}

/** The streamed chat completion. */
async function openAiStreamOnce(api: Api): Promise<{ first: number; full: number }> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/openai/chat/completions`, {
    method: 'POST',
    headers: headers(api),
    body: JSON.stringify({ model: api.agentUuid, messages: [{ role: 'user', content: INPUT }], stream: true }),
  })
  if (response.status !== 200) throw new Error(`chat completion stream: HTTP ${response.status}`)
  const read = await readEvents(response, start, (payload) => payload.startsWith('{') && /"content":"[^"]/.test(payload))
  if (read.data.at(-1) !== '[DONE]') throw new Error('chat completion stream: no [DONE]')
  const text = read.data
    .filter((payload) => payload.startsWith('{'))
    .map((payload) => (JSON.parse(payload) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
    .join('')
  if (text !== ANSWER) throw new Error(`chat completion stream: unexpected text ${text}`)
  return read
}

/** `n` alternating pairs of `native` then `openai`. */
async function pairs<T>(n: number, native: () => Promise<T>, openai: () => Promise<T>): Promise<{ native: T[]; openai: T[] }> {
  const out = { native: [] as T[], openai: [] as T[] }
  for (let i = 0; i < n; i++) {
    out.native.push(await native())
    out.openai.push(await openai())
  }
  return out
}

await runBench('aw_bench_openai', async (bench) => {
  const upstream = await startUpstreamChild()
  bench.children.push(upstream)
  const service = await startService(bench, [], { ...CHILD_ENV, OPENAI_API_KEY: 'sk-bench-openai', OPENAI_BASE_URL: upstream.url })
  const { token } = await signUp(service.url, 'Bench OpenAI', `bench-openai-${Date.now()}@example.com`)
  const created = await fetch(`${service.url}/api/v1/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench agent', instruction: 'Answer briefly.' }),
  })
  const agentUuid = (JSON.parse((await expectOk(created, 'create agent')).toString('utf8')) as { data: { uuid: string } }).data.uuid
  const api: Api = { url: service.url, token, agentUuid }

  console.log(`warm-up: ${settings.warmup} pairs of each kind`)
  await pairs(settings.warmup, () => nativeOnce(api), () => openAiOnce(api))
  await pairs(settings.warmup, () => nativeStreamOnce(api), () => openAiStreamOnce(api))
  console.log(`measuring: ${settings.sequential} pairs of each kind`)
  const answered = await pairs(settings.sequential, () => nativeOnce(api), () => openAiOnce(api))
  const streamed = await pairs(settings.sequential, () => nativeStreamOnce(api), () => openAiStreamOnce(api))

  const rows = [
    { what: 'answered when done', native: summariseP90(answered.native), openai: summariseP90(answered.openai) },
    { what: 'streamed: first text', native: summariseP90(streamed.native.map((r) => r.first)), openai: summariseP90(streamed.openai.map((r) => r.first)) },
    { what: 'streamed: end of stream', native: summariseP90(streamed.native.map((r) => r.full)), openai: summariseP90(streamed.openai.map((r) => r.full)) },
  ].map((row) => ({ ...row, ratio: row.openai.p50 / row.native.p50 }))
  const machine = machineOf(bench.postgres)
  const md = [
    `# OpenAI-compatible API vs native runs (${new Date().toISOString().slice(0, 10)})`,
    '',
    `${machine.line}; PostgreSQL ${bench.postgres}; load average ${machine.json.loadAverage.map((l) => fmt(l, 2)).join(' ')}; ${settings.sequential} alternating pairs`,
    '',
    '| | native p50 (p90) ms | OpenAI p50 (p90) ms | OpenAI / native p50 | target ≤ 110% |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.what} | ${fmt(r.native.p50, 2)} (${fmt(r.native.p90, 2)}) | ${fmt(r.openai.p50, 2)} (${fmt(r.openai.p90, 2)}) | ${fmt(r.ratio * 100, 1)}% | ${r.what.endsWith('end of stream') ? '—' : r.ratio <= TARGET_RATIO ? 'met' : 'not met'} |`,
    ),
    '',
  ].join('\n')
  console.log(`\n${md}`)
  writeResults(['openai-latest'], { date: new Date().toISOString(), machine: machine.json, settings, rows }, md)
})
