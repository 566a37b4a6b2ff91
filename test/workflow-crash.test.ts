/**
 * A process killed in the middle of an execution: real
 * `npm start` / `npm run worker` processes (src/server.ts, src/worker.ts under tsx) on the mode the
 * suite runs in (a PGlite data folder, or a fresh PostgreSQL database), killed with SIGKILL and
 * started again. After the restart the execution is marked failed (`abandoned`) by the recovery
 * sweep, exactly once, and nothing runs it twice. In distributed mode an API process with
 * `WORKER=false` hands background executions to a separate worker process.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NODE_FLAGS } from '../src/node-flags.ts'
import { freePort } from './helpers/ports.ts'
import { startProcess, processStorage } from './helpers/processes.ts'
import { httpClient, TEST_APP_KEY } from './helpers/app.ts'

/** Starts `script` and answers its process (test/helpers/processes.ts starts it). */
async function start(script: string, env: Record<string, string>, readyLine: RegExp): Promise<ChildProcess> {
  return (await startProcess(script, env, readyLine)).child
}

async function kill(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGKILL') {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill(signal)
  await exited
}

describe('a process killed mid-execution', () => {
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    APP_KEY: TEST_APP_KEY,
    HOST: '127.0.0.1',
    WORKFLOW_HEARTBEAT_MS: '300',
    SHUTDOWN_TIMEOUT_MS: '1000',
  }
  const children: ChildProcess[] = []
  let drop: (() => Promise<void>) | undefined
  const distributed = Boolean(process.env.DATABASE_URL)

  beforeAll(async () => {
    const storage = await processStorage('aw-crash')
    drop = storage.drop
    Object.assign(env, storage.env)
    delete env.REDIS_URL
  }, 60_000)
  afterAll(async () => {
    for (const child of children) await kill(child)
    await drop?.()
  })

  async function server(extra: Record<string, string> = {}) {
    const port = await freePort()
    const child = await start('src/server.ts', { ...env, PORT: String(port), ...extra }, /listening on/)
    children.push(child)
    return { child, http: httpClient(`http://127.0.0.1:${port}`) }
  }

  /** Signs up and creates a workflow whose second node waits 30 s. */
  async function setUp(http: ReturnType<typeof httpClient>, email: string) {
    const signUp = await http('POST', '/api/v1/auth/sign-up', { body: { name: 'Crash Tester', email, password: 'correct horse battery staple' } })
    expect(signUp.status, JSON.stringify(signUp.body)).toBe(201)
    const token = signUp.body.data?.access_token ?? signUp.body.access_token
    const created = await http('POST', '/api/v1/workflows', {
      token,
      body: {
        name: 'Slow',
        nodes: [
          { id: 'start', type: 'manual_trigger', parameters: {} },
          { id: 'pause', type: 'wait', parameters: { seconds: 30 } },
        ],
        edges: [{ id: 'e1', source: 'start', target: 'pause' }],
      },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    return { token: String(token), workflow: created.body.data.uuid as string }
  }

  async function until(http: ReturnType<typeof httpClient>, token: string, uuid: string, statuses: string[], timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const response = await http('GET', `/api/v1/workflow-executions/${uuid}`, { token })
      if (statuses.includes(response.body?.data?.status)) return response.body.data
      if (Date.now() > deadline) throw new Error(`execution ${uuid}: ${JSON.stringify(response.body)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  it('marks the execution failed after a restart, once, and never runs it twice', async () => {
    const first = await server()
    const { token, workflow } = await setUp(first.http, 'crash@example.com')
    const queued = await first.http('POST', `/api/v1/workflows/${workflow}/run`, { token, body: { background: true } })
    expect(queued.status).toBe(202)
    const uuid = queued.body.data.uuid as string
    await until(first.http, token, uuid, ['running'])
    await kill(first.child)

    const second = await server()
    const failed = await until(second.http, token, uuid, ['failed'])
    expect(failed.error).toMatchObject({ code: 'abandoned' })
    expect(failed.finished_at).not.toBeNull()
    // Give the queue time to try the dead worker's job again: the claim refuses it.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const list = await second.http('GET', `/api/v1/workflow-executions?workflow_uuid=${workflow}`, { token })
    expect(list.body.data.map((item: { uuid: string; status: string }) => [item.uuid, item.status])).toEqual([[uuid, 'failed']])
    await kill(second.child, 'SIGTERM')
  }, 120_000)

  it('refuses to start `npm run worker` without DATABASE_URL (embedded mode works the queue in npm start)', async () => {
    const { DATABASE_URL: _url, ...rest } = { ...process.env, ...env }
    void _url
    const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', 'src/worker.ts'], {
      env: { ...rest, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'aw-worker-')) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise((resolve) => child.on('exit', resolve))
    expect(code).toBe(1)
    expect(stderr).toMatch(/DATABASE_URL: npm run worker needs PostgreSQL/)
  }, 60_000)

  it.runIf(distributed)('hands background executions from an API process with WORKER=false to `npm run worker`', async () => {
    const api = await server({ WORKER: 'false' })
    const { token, workflow } = await setUp(api.http, 'distributed@example.com')
    await api.http('PUT', `/api/v1/workflows/${workflow}`, {
      token,
      body: {
        nodes: [
          { id: 'start', type: 'manual_trigger', parameters: {} },
          { id: 'shape', type: 'set', parameters: { values: { worked: true } } },
        ],
        edges: [{ id: 'e1', source: 'start', target: 'shape' }],
      },
    })
    const queued = await api.http('POST', `/api/v1/workflows/${workflow}/run`, { token, body: { background: true } })
    expect(queued.status).toBe(202)
    // Nobody works the queue yet: it stays queued.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect((await api.http('GET', `/api/v1/workflow-executions/${queued.body.data.uuid}`, { token })).body.data.status).toBe('queued')
    const worker = await start('src/worker.ts', env, /worker started/)
    children.push(worker)
    const done = await until(api.http, token, queued.body.data.uuid, ['succeeded'])
    expect(done.output).toMatchObject({ worked: true })
    await kill(worker, 'SIGTERM')
    await kill(api.child, 'SIGTERM')
  }, 120_000)
})
