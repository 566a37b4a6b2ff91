/**
 * Processes killed with SIGKILL in the middle of their work (docs/api/runs.md and
 * docs/api/workflows.md, "crashes"): real `npm start` / `npm run worker` processes under tsx, on
 * the mode the suite runs in (a PGlite data folder, or a fresh PostgreSQL database; workers need
 * PostgreSQL). Heartbeats tell the survivors (or the restarted process) that the work's process
 * died: runs end `interrupted` with their final event, executions are resumed or failed per
 * their workflow's `on_interrupt`, within seconds, and nothing runs twice.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from './helpers/database.ts'
import { TEST_APP_KEY } from './helpers/app.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { startServer, stopProcess, until, type ServiceProcess } from './helpers/processes.ts'

/** The environment every process of a test shares: the test defaults, and a database of its own. */
async function baseEnv(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const env: Record<string, string> = { NODE_ENV: 'test', LOG_LEVEL: 'info', APP_KEY: TEST_APP_KEY }
  if (!process.env.DATABASE_URL) {
    env.DATA_DIR = mkdtempSync(path.join(tmpdir(), 'aw-recovery-'))
    return { env, drop: async () => {} }
  }
  const database = await freshDatabase()
  await database.orm.close()
  env.DATABASE_URL = database.url!
  return { env, drop: database.drop }
}

describe('npm start killed with background agent runs in flight', () => {
  const RUNS = 20
  let upstream: Upstream
  let env: Record<string, string>
  let drop: (() => Promise<void>) | undefined
  const processes: ServiceProcess[] = []

  beforeAll(async () => {
    upstream = await startUpstream()
    // The model never answers in time: every run is mid-call when its process dies.
    upstream.respondWith(() => ({ kind: 'slow', delayMs: 60_000 }))
    const base = await baseEnv()
    drop = base.drop
    env = { ...base.env, OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url }
  }, 60_000)
  afterAll(async () => {
    for (const proc of processes) await stopProcess(proc)
    await upstream?.close()
    await drop?.()
  })

  it('ends every run failed (interrupted) with its final event within 20 s of the restart; none stays running', async () => {
    const first = await startServer(env)
    processes.push(first)
    const signUp = await first.http('POST', '/api/v1/auth/sign-up', { body: { name: 'Crash', email: 'crash@example.com', password: 'correct horse battery staple' } })
    expect(signUp.status, JSON.stringify(signUp.body)).toBe(201)
    const token = String(signUp.body.data.access_token)
    const agent = await first.http('POST', '/api/v1/agents', { token, body: { name: 'Doomed', instruction: 'Answer.' } })
    const started = await Promise.all(
      Array.from({ length: RUNS }, (_, n) =>
        first.http('POST', `/api/v1/agents/${agent.body.data.uuid}/run`, { token, body: { input: `question ${n}`, background: true } }),
      ),
    )
    for (const res of started) expect(res.status, JSON.stringify(res.body)).toBe(202)
    const uuids = started.map((res) => String(res.body.data.run.uuid))
    await until(async () => upstream.requests.length, (count) => count === RUNS, 20_000)

    await stopProcess(first, 'SIGKILL')
    const killed = Date.now()
    const second = await startServer(env)
    processes.push(second)
    const ready = Date.now()

    // Followers on the new process: each stream ends with the run's final event.
    const streams = await Promise.all(uuids.map((uuid) => readSse(`${second.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${token}` })))
    const final = Date.now()
    for (const stream of streams) {
      const last = stream.events.at(-1)!
      expect(last.event).toBe('run.failed')
      expect(JSON.parse(last.data).data.error).toMatchObject({ code: 'interrupted' })
    }
    const runs = await Promise.all(uuids.map(async (uuid) => (await second.http('GET', `/api/v1/runs/${uuid}`, { token })).body.data.run))
    const byStatus = runs.reduce<Record<string, number>>((counts, run) => ({ ...counts, [`${run.status}/${run.error?.code}`]: (counts[`${run.status}/${run.error?.code}`] ?? 0) + 1 }), {})
    expect(byStatus).toEqual({ 'failed/interrupted': RUNS })
    for (const [index, run] of runs.entries()) expect(run.events_count).toBe(Number(streams[index].events.at(-1)!.id))
    console.info(`runs final ${final - killed} ms after the kill, ${final - ready} ms after the restarted process was ready`)
    expect(final - ready).toBeLessThan(20_000)
    expect(await stopProcess(second, 'SIGTERM')).toBe(0)
  }, 90_000)
})
