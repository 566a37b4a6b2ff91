/**
 * A database blip loses nothing (docs/operations.md, "Database deadlines"): real processes (an API
 * process with `WORKER=false` and a worker, test/helpers/processes.ts) on a fresh PostgreSQL
 * database, under a steady mixed load, while the test ends every connection they hold to it every
 * 1-1.5 s for 12 s (`pg_terminate_backend`, as a failover or a pooler restart does), no process
 * dying. The model is the local test upstream (test/helpers/upstream.ts), answering each call in
 * full after 200-500 ms.
 *
 * The load, in lanes of closed-loop senders: agent runs waited for and in the background
 * (docs/api/runs.md), webhook calls of a workflow without a respond node whose sender retries on
 * 503 (docs/api/workflows.md, "Webhooks"), "run now" firings of an agent task and of a workflow
 * task (docs/api/command-room.md), and runs, waited and in the background, of a workflow whose
 * `set` node counts its executions in static data (the workflow task's workflow too).
 *
 * Once everything has ended, the database (read on the test's own connection) and the answers
 * must show:
 * 1. every answer 2xx or 503 with Retry-After (never a 502, which blames the model provider);
 *    every run succeeded with its assistant message stored and a gap-free event log;
 * 2. every firing succeeded, with its run or execution stored;
 * 3. one webhook execution per 202, each succeeded and run once: a 503 stored nothing;
 * 4. every execution of the counting workflow succeeded, and the counter equals their number,
 *    each of them having seen a different value;
 * 5. no driver text (`terminating connection due to administrator command`...) in any answer or
 *    stored error.
 * Processes killed with work in flight are test/crash-recovery.test.ts's.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest'
import {
  DRIVER_TEXT,
  faultDatabase,
  driverTextIn,
  openWork,
  processWarnings,
  runsWithoutEcho,
  startTerminator,
  storedWork,
} from './helpers/database-faults.ts'
import {
  startHitCounter,
  startProcess,
  startServer,
  stopProcess,
  until,
  type HitCounter,
  type ServiceProcess,
} from './helpers/processes.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

/** How long connections are ended for, and the pause before each round (a random one in the range). */
const FAULT_MS = 12_000
const EVERY_MS: [number, number] = [1_000, 1_500]
/** A request unanswered after this is given up (status 0): a lost connection must not hang one. */
const GIVE_UP_MS = 15_000
/** Tries of a webhook sender that retries on 503, as webhook senders do. */
const WEBHOOK_TRIES = 5

/** The kinds of request of the load. */
type Kind =
  'agent run' | 'agent run background' | 'webhook' | 'fire agent task' | 'fire workflow task' | 'count run' | 'count run background'

/** One answer; status 0 when it was given up on or the connection failed. */
interface Answer {
  kind: Kind
  n: number
  /** A webhook's try (1 for the others). */
  attempt: number
  status: number
  ms: number
  retryAfter: string | null
  text: string
  body: any
}

/** Statuses a kind may answer besides 503 with Retry-After. */
const SUCCESS: Record<Kind, number> = {
  'agent run': 200,
  'agent run background': 202,
  webhook: 202,
  'fire agent task': 202,
  'fire workflow task': 202,
  'count run': 200,
  'count run background': 202,
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Sends one request with a deadline; never rejects. */
async function send(url: string, kind: Kind, n: number, attempt: number, body: unknown, token?: string): Promise<Answer> {
  const started = performance.now()
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(GIVE_UP_MS),
    })
    const text = await response.text()
    let parsed: unknown = null
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {
      parsed = text
    }
    return {
      kind,
      n,
      attempt,
      status: response.status,
      ms: performance.now() - started,
      retryAfter: response.headers.get('retry-after'),
      text,
      body: parsed,
    }
  } catch (error) {
    return { kind, n, attempt, status: 0, ms: performance.now() - started, retryAfter: null, text: String(error), body: null }
  }
}

/** How many times each of `items` occurs: a line of evidence. */
const tally = (items: string[]) =>
  items.reduce<Record<string, number>>((counts, item) => ({ ...counts, [item]: (counts[item] ?? 0) + 1 }), {})

describe.runIf(Boolean(process.env.DATABASE_URL))('connections ended every 1-1.5 s under a mixed load, no process dying', () => {
  let upstream: Upstream
  let counter: HitCounter
  let admin: pg.Client
  let database: string
  let env: Record<string, string>
  let close: (() => Promise<void>) | undefined
  const processes: ServiceProcess[] = []

  beforeAll(async () => {
    upstream = await startUpstream()
    // Every call answered in full, a little later: runs are mid-call when their connections end.
    upstream.respondWith(() => ({ kind: 'slow', delayMs: 200 + Math.floor(Math.random() * 300) }))
    counter = await startHitCounter()
    const fresh = await faultDatabase()
    close = fresh.close
    ;({ admin, database } = fresh)
    env = { ...fresh.env, OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url }
  }, 60_000)
  afterAll(async () => {
    for (const proc of processes) await stopProcess(proc)
    await counter?.close()
    await upstream?.close()
    await close?.()
  })

  it('loses no finished answer, firing or webhook, counts every execution once, and shows no driver text', async () => {
    onTestFailed(() => console.error(processes.map((proc) => processWarnings(proc.output())).join('\n---- next process ----\n')))
    const [api, worker] = await Promise.all([
      startServer({ ...env, WORKER: 'false' }),
      startProcess('src/worker.ts', env, /worker started/),
    ])
    processes.push(api, worker)
    const { http } = api
    const signUp = await http('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Blips', email: 'db-faults@example.com', password: 'correct horse battery staple' },
    })
    expect(signUp.status, JSON.stringify(signUp.body)).toBe(201)
    const token = String(signUp.body.data.access_token)
    const created = async (path: string, body: unknown) => {
      const res = await http('POST', path, { token, body })
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(201)
      return res.body.data
    }
    const agent = await created('/api/v1/agents', { name: 'Answers', instruction: 'Answer.' })
    const counting = await created('/api/v1/workflows', {
      name: 'Counting',
      static_data: { n: 0 },
      nodes: [
        { id: 'start', type: 'manual_trigger', parameters: {} },
        { id: 'count', type: 'set', parameters: { values: { n: '=$static.n + 1' }, static_data: { n: '=$static.n + 1' } } },
      ],
      edges: [{ source: 'start', target: 'count' }],
    })
    const hooked = await created('/api/v1/workflows', {
      name: 'Hooked',
      is_active: true,
      nodes: [
        { id: 'hook', type: 'webhook_trigger', parameters: {} },
        { id: 'hit', type: 'http_request', parameters: { method: 'GET', url: `="${counter.url}/hit/" & $execution.uuid` } },
      ],
      edges: [{ source: 'hook', target: 'hit' }],
    })
    const hookPath = `/api/v1/hooks/${String(hooked.webhook_url).split('/').at(-1)}`
    // Due tomorrow: they fire only when told to.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString()
    const agentTask = await created('/api/v1/command-room/tasks', {
      name: 'Agent now',
      agent_uuid: agent.uuid,
      input: 'fired',
      schedule: 'once',
      run_at: tomorrow,
    })
    const workflowTask = await created('/api/v1/command-room/tasks', {
      name: 'Workflow now',
      workflow_uuid: counting.uuid,
      input: {},
      schedule: 'once',
      run_at: tomorrow,
    })

    /** Each lane: its senders, the pause after each answer, and its request (a webhook's sender retries on 503). */
    const lanes: { kind: Kind; senders: number; pauseMs: number; path: string; body: (n: number) => unknown }[] = [
      { kind: 'agent run', senders: 4, pauseMs: 0, path: `/api/v1/agents/${agent.uuid}/run`, body: (n) => ({ input: `waited ${n}` }) },
      {
        kind: 'agent run background',
        senders: 1,
        pauseMs: 150,
        path: `/api/v1/agents/${agent.uuid}/run`,
        body: (n) => ({ input: `background ${n}`, background: true }),
      },
      { kind: 'webhook', senders: 3, pauseMs: 20, path: hookPath, body: (n) => ({ delivery: n }) },
      { kind: 'fire agent task', senders: 1, pauseMs: 400, path: `/api/v1/command-room/tasks/${agentTask.uuid}/run`, body: () => ({}) },
      {
        kind: 'fire workflow task',
        senders: 1,
        pauseMs: 400,
        path: `/api/v1/command-room/tasks/${workflowTask.uuid}/run`,
        body: () => ({}),
      },
      { kind: 'count run', senders: 1, pauseMs: 50, path: `/api/v1/workflows/${counting.uuid}/run`, body: () => ({}) },
      {
        kind: 'count run background',
        senders: 1,
        pauseMs: 150,
        path: `/api/v1/workflows/${counting.uuid}/run`,
        body: () => ({ background: true }),
      },
    ]
    const answers: Answer[] = []
    let loading = true
    const sent = new Map<Kind, number>()
    const load = Promise.all(
      lanes.flatMap((lane) =>
        Array.from({ length: lane.senders }, async () => {
          while (loading) {
            const n = sent.get(lane.kind) ?? 0
            sent.set(lane.kind, n + 1)
            for (let attempt = 1; ; attempt++) {
              const answer = await send(
                `${api.url}${lane.path}`,
                lane.kind,
                n,
                attempt,
                lane.body(n),
                lane.kind === 'webhook' ? undefined : token,
              )
              answers.push(answer)
              if (lane.kind !== 'webhook' || answer.status !== 503 || attempt === WEBHOOK_TRIES) break
              await sleep(1000 * Number(answer.retryAfter ?? 1))
            }
            if (lane.pauseMs) await sleep(lane.pauseMs)
          }
        }),
      ),
    )
    await sleep(500)
    const terminator = startTerminator(admin, database, { everyMs: EVERY_MS, forMs: FAULT_MS })
    await terminator.done
    loading = false
    await load

    // Everything started has ended (the worker's queue included); then what is stored is read.
    await until(
      () => openWork(admin),
      (left) => left.runs + left.executions + left.firings === 0,
      40_000,
    )
    const work = await storedWork(admin)
    const { runs, firings, executions } = work
    const { rows: statics } = await admin.query<{ n: number }>(`select (static_data->>'n')::int as n from workflows where uuid = $1`, [
      counting.uuid,
    ])
    const counted = statics[0].n

    const ofKind = (kind: Kind) => answers.filter((a) => a.kind === kind && a.status === SUCCESS[kind])
    const countingExecutions = executions.filter((e) => e.workflow === counting.uuid)
    const hookExecutions = executions.filter((e) => e.workflow === hooked.uuid)
    // A run may be stored though its caller got a 503 (its end could not be written in time);
    // it then ends as any run does. How often is worth seeing.
    const inputs = new Set(runs.map((run) => run.messages?.[0]?.[1]))
    const storedAfter503 = answers.filter(
      (a) => a.status === 503 && a.kind.startsWith('agent run') && inputs.has(`${a.kind === 'agent run' ? 'waited' : 'background'} ${a.n}`),
    ).length
    const slowest = Object.fromEntries(
      lanes.map((lane) => [lane.kind, Math.round(Math.max(0, ...answers.filter((a) => a.kind === lane.kind).map((a) => a.ms)))]),
    )
    console.info(
      `ended ${terminator.ended} connections in ${terminator.rounds} rounds over ${FAULT_MS / 1000} s; ` +
        `answers ${JSON.stringify(tally(answers.map((a) => `${a.kind} ${a.status}`)))}; ${storedAfter503} agent runs answered 503 were stored; ` +
        `stored ${runs.length} runs, ${firings.length} firings, ${hookExecutions.length} webhook and ${countingExecutions.length} counted executions ` +
        `(counter ${counted}); slowest ms ${JSON.stringify(slowest)}`,
    )
    // The last pause is cut short at the deadline, and each round takes a few milliseconds.
    expect(terminator.rounds, 'connections were ended while the load ran').toBeGreaterThanOrEqual(Math.floor(FAULT_MS / EVERY_MS[1]) - 1)
    for (const lane of lanes) expect(ofKind(lane.kind).length, `${lane.kind}: some answered ${SUCCESS[lane.kind]}`).toBeGreaterThan(0)

    // 1, 3 (answers): each kind's success status, or 503 with Retry-After and the service's own
    // message; never a 502, a 500 or a request left unanswered.
    const wrongAnswers = answers
      .filter(
        (a) =>
          a.status !== SUCCESS[a.kind] && !(a.status === 503 && /^\d+$/.test(a.retryAfter ?? '') && a.body?.code === 'SERVICE_UNAVAILABLE'),
      )
      .map((a) => `${a.kind} ${a.n}: ${a.status} after ${Math.round(a.ms)} ms ${a.text.slice(0, 300)}`)
    expect(wrongAnswers, 'every answer is its success status or 503 with Retry-After').toEqual([])

    // 1 (runs): every model call was answered in full, so every run succeeded with that answer
    // stored, the one its 200 said; its log has no gap.
    const runUuids = new Set(runs.map((run) => run.uuid))
    expect(runsWithoutEcho(work), 'every run succeeded with its user message and its answer stored, once').toEqual([])
    expect(work.gaps, 'every run log is seq 1..events_count, ending with its final event').toEqual([])
    const waitedWrong = ofKind('agent run').filter(
      (a) =>
        a.body?.data?.run?.status !== 'succeeded' ||
        a.body.data.run.output !== `Echo: waited ${a.n}` ||
        !runUuids.has(a.body.data.run.uuid),
    )
    expect(
      waitedWrong.map((a) => `${a.n}: ${a.text.slice(0, 300)}`),
      'every 200 is its run succeeded with its answer, and stored',
    ).toEqual([])
    const backgroundMissing = ofKind('agent run background').filter((a) => !runUuids.has(String(a.body?.data?.run?.uuid)))
    expect(
      backgroundMissing.map((a) => a.text.slice(0, 300)),
      'every 202 run is stored',
    ).toEqual([])

    // 2: every firing succeeded, with what it started stored; every 202 is one of them.
    const firingUuids = new Set(firings.map((firing) => firing.uuid))
    const executionsByUuid = new Map(executions.map((execution) => [execution.uuid, execution]))
    expect(
      firings.filter((f) => f.status !== 'succeeded').map((f) => `${f.uuid} ${f.status}: ${f.error}`),
      'every firing ended succeeded',
    ).toEqual([])
    const unlinked = firings.filter((f) =>
      f.task === agentTask.uuid ? !runUuids.has(String(f.run_uuid)) : !executionsByUuid.has(String(f.execution_uuid)),
    )
    expect(
      unlinked.map((f) => `${f.uuid}: run ${f.run_uuid}, execution ${f.execution_uuid}`),
      "every firing's run or execution is stored",
    ).toEqual([])
    const firedMissing = [...ofKind('fire agent task'), ...ofKind('fire workflow task')].filter(
      (a) => !firingUuids.has(String(a.body?.data?.uuid)),
    )
    expect(
      firedMissing.map((a) => a.text.slice(0, 300)),
      'every 202 firing is stored',
    ).toEqual([])

    // 3: one execution per 202, none for a 503; each succeeded and ran its node once.
    const hooks202 = ofKind('webhook').map((a) => String(a.body?.data?.execution_uuid))
    expect(new Set(hooks202).size, 'each 202 names its own execution').toBe(hooks202.length)
    expect(hookExecutions.map((e) => e.uuid).sort(), 'the webhook executions are exactly those of the 202s: a 503 stored nothing').toEqual(
      hooks202.sort(),
    )
    expect(
      hookExecutions
        .filter((e) => e.status !== 'succeeded' || counter.hits.get(e.uuid) !== 1)
        .map((e) => `${e.uuid} ${e.status} ${e.error} hits ${counter.hits.get(e.uuid)}`),
      'every webhook execution succeeded and ran its node once',
    ).toEqual([])

    // 4: every counted execution succeeded and saw a value of its own; the counter is their number.
    expect(
      countingExecutions.filter((e) => e.status !== 'succeeded').map((e) => `${e.uuid} ${e.status}: ${e.error}`),
      'every execution of the counting workflow succeeded',
    ).toEqual([])
    const countsMissing = [...ofKind('count run'), ...ofKind('count run background')].filter(
      (a) => !executionsByUuid.has(String(a.body?.data?.uuid)) || (a.kind === 'count run' && a.body.data.status !== 'succeeded'),
    )
    expect(
      countsMissing.map((a) => `${a.kind} ${a.n}: ${a.text.slice(0, 300)}`),
      'every 200 is its execution succeeded, every 202 is stored',
    ).toEqual([])
    expect(counted, 'the counter equals the number of executions').toBe(countingExecutions.length)
    expect(
      countingExecutions.map((e) => Number(e.output?.n)).sort((a, b) => a - b),
      'each execution applied its count once',
    ).toEqual(countingExecutions.map((_, i) => i + 1))

    // 5: no driver text anywhere a user sees it.
    const leaks = [
      ...answers.filter((a) => DRIVER_TEXT.test(a.text)).map((a) => `answer ${a.kind} ${a.n}: ${a.text.slice(0, 300)}`),
      ...driverTextIn(work),
    ]
    expect(leaks, 'no driver text in answers or stored errors').toEqual([])
  }, 90_000)
})
