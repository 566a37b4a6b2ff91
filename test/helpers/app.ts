/**
 * The real service for tests (fastify/demo's "a test helper that builds the real app"): a fresh
 * database, the real runtime (Redis when REDIS_URL is set), the HTTP host listening on a free
 * loopback port, procedure callers through `appRouter.createCaller`, and factories.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { createCaller } from '../../routers/index.ts'
import { createRuntime, type Runtime } from '../../src/app.ts'
import { createLogger, LOG_OPTIONS } from '../../src/platform/logger.ts'
import { loadConfig, type Config } from '../../src/platform/config.ts'
import { buildHttpApp } from '../../src/http/app.ts'
import { freshDatabase } from './database.ts'
import { checkAnswer } from './contract.ts'
import type { z } from 'zod'
import type { WorkspaceRole } from '../../entities/index.ts'
import type { TWorkspace } from '../../src/access/user-workspace.schema.ts'
import type { CreateWorkspaceInput } from '../../src/access/user-workspace.schema.ts'

/** A fixed key so tests never write one into a data folder. */
export const TEST_APP_KEY = `base64:${Buffer.alloc(32, 7).toString('base64')}`

/** A response read over HTTP. */
export interface HttpResult {
  status: number
  headers: Headers
  /** Parsed JSON, or the raw text when the body is not JSON, or null when empty. */
  body: any
}

/** A user made by the factory, with a basic token. */
export interface TestUser {
  id: number
  email: string
  password: string
  token: string
  /** uuid of the user's primary workspace. */
  workspaceUuid: string
}

export interface TestApp {
  runtime: Runtime
  /** The Fastify host, listening. */
  app: FastifyInstance
  config: Config
  url: string
  /** A procedure caller with these request headers (Authorization, X-Workspace-UUID, ...). */
  caller: (headers?: Record<string, string>) => ReturnType<typeof createCaller>
  /** A caller authenticated with the token. */
  as: (user: { token: string }, headers?: Record<string, string>) => ReturnType<typeof createCaller>
  /** An HTTP request against the running server. */
  http: (
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> },
  ) => Promise<HttpResult>
  make: {
    user: (overrides?: { name?: string; email?: string; password?: string; serviceKey?: string }) => Promise<TestUser>
    /** A workspace created by `owner` (who becomes its `owner` member); answers the Workspace shape. */
    workspace: (owner: { token: string }, input?: Partial<z.input<typeof CreateWorkspaceInput>>) => Promise<TWorkspace>
    /** Adds `user` to the workspace with `role` (default `member`), acting as `by` (an owner or admin). */
    member: (workspace: { uuid: string } | string, by: { token: string }, user: { id: number }, role?: WorkspaceRole) => Promise<void>
  }
  /** Runs raw SQL on the test database. */
  sql: (query: string, params?: unknown[]) => Promise<Record<string, unknown>[]>
  close: () => Promise<void>
}

/**
 * HTTP requests against the server at `url` (a bearer token, a JSON or raw body, headers). Every
 * REST answer is checked against the OpenAPI document (./contract.ts): one it does not declare
 * fails the calling test.
 */
export function httpClient(url: string): TestApp['http'] {
  return async (method, pathname, options = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    let body: string | Buffer | undefined = options.rawBody
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] ??= 'application/json'
    }
    const response = await fetch(url + pathname, { method, headers, body })
    const text = await response.text()
    let parsed: unknown = null
    if (text) {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = text
      }
    }
    checkAnswer(method.toUpperCase(), pathname, response.status, response.headers.get('content-type'), parsed)
    return { status: response.status, headers: response.headers, body: parsed }
  }
}

/**
 * A logger for `createTestApp`'s `log` option that keeps every line (trace and up, redacted as in
 * production) in `lines`, for tests that read the logs.
 */
export function captureLogs(): { log: FastifyBaseLogger; lines: string[] } {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  return { log: pino({ level: 'trace', ...LOG_OPTIONS }, sink), lines }
}

/**
 * Starts the service on a fresh database.
 * @param env extra environment (e.g. `SIGN_IN_MAX_PER_EMAIL`), over the test defaults.
 * @param options.log a logger to capture log lines (defaults to a silent one).
 */
export async function createTestApp(env: Record<string, string> = {}, options: { log?: FastifyBaseLogger } = {}): Promise<TestApp> {
  const database = await freshDatabase()
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PORT: '0',
    DATA_DIR: path.join(tmpdir(), `aw-test-${randomBytes(4).toString('hex')}`),
    APP_KEY: TEST_APP_KEY,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    SERVICE_KEYS: 'acme:acme-service-key-0123456789,globex:globex-service-key-0123456789',
    SIGN_IN_MAX_PER_ADDRESS: '100000',
    ...env,
  })
  const runtime = await createRuntime(config, {
    orm: database.orm,
    migrate: false,
    log: options.log ?? createLogger(config),
    rateLimitPrefix: `test-${randomUUID()}`,
    // Tests change tokens and workspaces with raw SQL and expect the next request to see it;
    // test/auth-cache.test.ts starts its own runtimes with the cache on.
    authCacheTtlMs: 0,
    readCacheTtlMs: 0,
  })
  const { app, createContext } = await buildHttpApp(runtime)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`

  const caller = (headers: Record<string, string> = {}) =>
    createCaller(
      createContext({
        requestId: randomUUID(),
        ip: '127.0.0.1',
        headers: Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value])),
        setHeader: () => {},
      }),
    )
  const as = (user: { token: string }, headers: Record<string, string> = {}) =>
    caller({ authorization: `Bearer ${user.token}`, ...headers })

  const http = httpClient(url)

  let counter = 0
  const make: TestApp['make'] = {
    user: async (overrides = {}) => {
      counter += 1
      const email = overrides.email ?? `user${counter}-${randomBytes(3).toString('hex')}@example.com`
      const password = overrides.password ?? 'correct horse battery'
      const headers: Record<string, string> = overrides.serviceKey ? { 'x-service-authorization': overrides.serviceKey } : {}
      const result = await caller(headers).auth.signUp({ name: overrides.name ?? `User ${counter}`, email, password })
      const { user, access_token } = result.data
      return { id: user.id, email, password, token: access_token, workspaceUuid: user.primary_workspace?.uuid ?? '' }
    },
    workspace: async (owner, input = {}) => {
      counter += 1
      const result = await as(owner).workspaces.create({ name: `Workspace ${counter}`, ...input })
      return result.data
    },
    member: async (workspace, by, user, role = 'member') => {
      const uuid = typeof workspace === 'string' ? workspace : workspace.uuid
      await as(by).workspaces.members.add({ workspace_uuid: uuid, user_id: user.id, role })
    },
  }

  return {
    runtime,
    app,
    config,
    url,
    caller,
    as,
    http,
    make,
    sql: (query, params = []) => runtime.orm.em.fork().execute(query, params),
    close: async () => {
      if (app.server.listening) await app.close()
      await runtime.redis?.close()
      await database.drop()
    },
  }
}
