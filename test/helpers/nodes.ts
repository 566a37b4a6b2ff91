/**
 * More API "processes" for tests of the per-process caches: a runtime and HTTP host each, over
 * the test app's database (and Redis when REDIS_URL is set), with the caches on, as several API
 * processes share one database and one Redis in distributed mode.
 */
import { randomUUID } from 'node:crypto'
import { createRuntime, type Runtime } from '../../src/app.ts'
import type { FastifyBaseLogger } from 'fastify'
import { createLogger } from '../../src/platform/logger.ts'
import { buildHttpApp } from '../../src/http/app.ts'
import { AUTH_CACHE_TTL_MS } from '../../src/platform/auth-cache.ts'
import { READ_CACHE_TTL_MS } from '../../src/platform/read-cache.ts'
import { httpClient, type TestApp } from './app.ts'

/** One more API process on the test app's database (and Redis), with the caches on. */
export interface Node {
  runtime: Runtime
  /** Base URL of its HTTP host. */
  url: string
  http: TestApp['http']
  close: () => Promise<void>
}

/**
 * Starts a {@link Node}; `ttlMs` / `readTtlMs` set the token and read caches' lifetimes.
 * @param options.log a logger to capture its log lines (test/helpers/app.ts, `captureLogs`); default silent.
 */
export async function startNode(
  t: TestApp,
  ttlMs = AUTH_CACHE_TTL_MS,
  readTtlMs = READ_CACHE_TTL_MS,
  options: { log?: FastifyBaseLogger } = {},
): Promise<Node> {
  const runtime = await createRuntime(t.config, {
    orm: t.runtime.orm,
    migrate: false,
    log: options.log ?? createLogger(t.config),
    rateLimitPrefix: `test-${randomUUID()}`,
    authCacheTtlMs: ttlMs,
    readCacheTtlMs: readTtlMs,
  })
  const { app } = await buildHttpApp(runtime)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  return {
    runtime,
    url,
    http: httpClient(url),
    close: async () => {
      await app.close()
      // Not runtime.close(): the ORM belongs to the test app.
      await runtime.authCache.close()
      await runtime.readCache.close()
      await runtime.runs.close(1_000)
      await runtime.workflows.close(1_000)
      await runtime.jobs.stop(1_000)
      await runtime.redis?.close()
    },
  }
}
