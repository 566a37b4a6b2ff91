/**
 * `npm run bench:a2a`: what A2A (docs/api/a2a.md) adds to a run of the same agent through the
 * native API, with the local OpenAI-compatible upstream of the tests (bench/runs-upstream.ts,
 * answering at once) as the agent's model, on PostgreSQL (a fresh database `aw_bench_a2a_*` on
 * BENCH_DATABASE_URL, dropped at the end), all over 127.0.0.1: a blocking `message/send` to
 * `POST /api/v1/a2a/{uuid}` against `POST /api/v1/agents/{uuid}/run`, time to the whole answer.
 *
 * Each pair is measured alternately, request by request (the native one, then the A2A one), so a
 * busy machine slows both alike. Every answer is checked (`Echo: <input>`, a completed task).
 * Target: the A2A p50 at most 10% above the native p50. The exit code is 0 whether or not the
 * target is met (a measurement), 1 on an error.
 *
 * Environment: BENCH_A2A_SEQUENTIAL (pairs measured, default 150), BENCH_A2A_WARMUP (pairs before
 * measuring, default 30), BENCH_DATABASE_URL.
 */
import { randomUUID } from 'node:crypto'
import { CHILD_ENV, envNumber, summariseP90, expectOk, fmt, machineOf, runBench, signUp, startService, writeResults } from './harness.ts'
import { startUpstreamChild } from './processes.ts'

const count = (name: string, fallback: number) => Math.floor(envNumber(name, fallback))
const settings = { sequential: count('BENCH_A2A_SEQUENTIAL', 150), warmup: count('BENCH_A2A_WARMUP', 30) }
/** The A2A route's p50 at most this far above the native one's. */
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

/** The native run answered when done. */
async function nativeOnce(api: Api): Promise<number> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${api.agentUuid}/run`, {
    method: 'POST',
    headers: headers(api),
    body: JSON.stringify({ input: INPUT }),
  })
  const body = JSON.parse((await expectOk(response, 'native run')).toString('utf8')) as { data: { run: { output: string } } }
  if (body.data.run.output !== ANSWER) throw new Error(`native run: unexpected output ${body.data.run.output}`)
  return now() - start
}

/** A blocking A2A `message/send`, answered with the completed task. */
async function a2aOnce(api: Api): Promise<number> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/a2a/${api.agentUuid}`, {
    method: 'POST',
    headers: headers(api),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text: INPUT }] } },
    }),
  })
  const body = JSON.parse((await expectOk(response, 'message/send')).toString('utf8')) as {
    result?: { status: { state: string }; artifacts?: { parts: { text?: string }[] }[] }
    error?: unknown
  }
  const text = body.result?.artifacts?.[0]?.parts[0]?.text
  if (body.result?.status.state !== 'completed' || text !== ANSWER)
    throw new Error(`message/send: unexpected answer ${JSON.stringify(body).slice(0, 300)}`)
  return now() - start
}

/** `n` alternating pairs of `native` then `a2a`. */
async function pairs(n: number, api: Api): Promise<{ native: number[]; a2a: number[] }> {
  const out = { native: [] as number[], a2a: [] as number[] }
  for (let i = 0; i < n; i++) {
    out.native.push(await nativeOnce(api))
    out.a2a.push(await a2aOnce(api))
  }
  return out
}

await runBench('aw_bench_a2a', async (bench) => {
  const upstream = await startUpstreamChild()
  bench.children.push(upstream)
  const service = await startService(bench, [], { ...CHILD_ENV, OPENAI_API_KEY: 'sk-bench-a2a', OPENAI_BASE_URL: upstream.url })
  const { token } = await signUp(service.url, 'Bench A2A', `bench-a2a-${Date.now()}@example.com`)
  const created = await fetch(`${service.url}/api/v1/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench agent', instruction: 'Answer briefly.' }),
  })
  const agentUuid = (JSON.parse((await expectOk(created, 'create agent')).toString('utf8')) as { data: { uuid: string } }).data.uuid
  const api: Api = { url: service.url, token, agentUuid }

  console.log(`warm-up: ${settings.warmup} pairs`)
  await pairs(settings.warmup, api)
  console.log(`measuring: ${settings.sequential} pairs`)
  const measured = await pairs(settings.sequential, api)
  const native = summariseP90(measured.native)
  const a2a = summariseP90(measured.a2a)
  const ratio = a2a.p50 / native.p50
  const machine = machineOf(bench.postgres)
  const md = [
    `# A2A message/send vs native runs (${new Date().toISOString().slice(0, 10)})`,
    '',
    `${machine.line}; PostgreSQL ${bench.postgres}; load average ${machine.json.loadAverage.map((l) => fmt(l, 2)).join(' ')}; ${settings.sequential} alternating pairs`,
    '',
    '| | native p50 (p90) ms | A2A p50 (p90) ms | A2A / native p50 | target ≤ 110% |',
    '|---|---|---|---|---|',
    `| answered when done | ${fmt(native.p50, 2)} (${fmt(native.p90, 2)}) | ${fmt(a2a.p50, 2)} (${fmt(a2a.p90, 2)}) | ${fmt(ratio * 100, 1)}% | ${ratio <= TARGET_RATIO ? 'met' : 'not met'} |`,
    '',
  ].join('\n')
  console.log(`\n${md}`)
  writeResults(['a2a-latest'], { date: new Date().toISOString(), machine: machine.json, settings, native, a2a, ratio }, md)
})
