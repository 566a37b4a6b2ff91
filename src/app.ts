/**
 * Process wiring shared by `npm start`, the worker, the tests and the benchmark: configuration
 * in, long-lived dependencies (ORM, Keyv cache, rate limiters, logger, job queue, engines) out.
 * The composition root: it hands the engines what they reach the services through (the workflow
 * engine's node services) and the job queue they register their jobs with.
 */
import { Keyv } from 'keyv'
import type { Config } from './platform/config.ts'
import { createLogger, type Logger } from './platform/logger.ts'
import { migrate, openOrm, targetFromConfig, type Orm } from './platform/db.ts'
import { AUTH_CACHE_TTL_MS, AuthCache } from './platform/auth-cache.ts'
import { READ_CACHE_TTL_MS, ReadCache } from './platform/read-cache.ts'
import { JobQueue } from './platform/queue.ts'
import { RedisConnection } from './platform/redis.ts'
import type { AuthContext } from './context.ts'
import type { AppDeps } from './trpc/context.ts'
import { RunManager } from './llm/run-manager.ts'
import { WorkflowEngine } from './workflow-engine/engine.ts'
import { createWorkflowNodeServices } from './services/workflow-node-services.ts'
import { InFlight } from './trpc/in-flight.ts'
import { hashServiceKeys } from './trpc/init.ts'
import { createRateLimits } from './trpc/rate-limit.ts'

/** Dependencies plus the means to release them. */
export interface Runtime extends AppDeps {
  /** The whole run manager (services see its port, `RunsPort`). */
  runs: RunManager
  /** The whole workflow engine (services see its port, `WorkflowsPort`). */
  workflows: WorkflowEngine
  /** The durable job queue (pg-boss) the engines register their jobs with. */
  jobs: JobQueue
  close: () => Promise<void>
}

/**
 * Opens the database (migrating it unless `migrate: false`), Redis when configured, the cache,
 * the bearer-token cache (src/platform/auth-cache.ts) and the rate limiters.
 * @param options.orm an already opened ORM (tests); `rateLimitPrefix` separates counters.
 * @param options.authCacheTtlMs lifetime of a cached bearer token; 0 turns the cache off. The
 *   default is {@link AUTH_CACHE_TTL_MS}. The test helper passes 0: the suite changes tokens,
 *   users and workspaces with raw SQL behind the services' back and expects the next request to
 *   see it, which no cache can promise (test/auth-cache.test.ts turns it on).
 * @param options.readCacheTtlMs lifetime of a cached resource read (src/platform/read-cache.ts);
 *   0 turns it off, default {@link READ_CACHE_TTL_MS}. The test helper passes 0 for the same reason.
 * @throws when the database or Redis cannot be reached.
 */
export async function createRuntime(
  config: Config,
  options: {
    orm?: Orm
    migrate?: boolean
    log?: Logger
    rateLimitPrefix?: string
    authCacheTtlMs?: number
    readCacheTtlMs?: number
    /** Work the job queue (every registered job) in this process (default `config.worker`, from `WORKER`). */
    worker?: boolean
  } = {},
): Promise<Runtime> {
  const log = options.log ?? createLogger(config)
  const orm = options.orm ?? (await openOrm(targetFromConfig(config)))
  if (options.migrate !== false) {
    const applied = await migrate(orm)
    if (applied.length) log.info({ migrations: applied }, 'applied migrations')
  }
  // Every call on it has a deadline and a circuit (src/platform/redis.ts).
  const redis = config.redisUrl ? await RedisConnection.connect(config.redisUrl, log) : undefined
  // A read or write of the Redis store that fails is a miss (Keyv answers undefined or false).
  const cache = new Keyv({ store: redis ? redis.keyvStore() : new Map(), namespace: 'cache' })
  const limits = createRateLimits(config, redis, options.rateLimitPrefix)
  const authCache = await AuthCache.create<AuthContext>({
    ttlMs: options.authCacheTtlMs ?? AUTH_CACHE_TTL_MS,
    log,
    redis,
  })
  const readCache = await ReadCache.create({ ttlMs: options.readCacheTtlMs ?? READ_CACHE_TTL_MS, log, redis })
  const inFlight = new InFlight()
  const runs = await RunManager.create({ orm, config, log, readCache, redis })
  const jobs = new JobQueue(orm, config, log)
  const workflows = await WorkflowEngine.create({ orm, config, log, readCache, jobs })
  const runtime: Runtime = {
    orm,
    config,
    cache,
    limits,
    log,
    redis,
    serviceKeyHashes: hashServiceKeys(config.serviceKeys),
    authCache,
    inFlight,
    readCache,
    runs,
    workflows,
    jobs,
    close: async () => {
      // Calls whose clients left are still running: let them finish before the database goes.
      await inFlight.idle(config.shutdownTimeoutMs)
      // So are runs executing here (their clients may have left too): finish or interrupt them.
      await runs.close(config.shutdownTimeoutMs)
      await workflows.close(config.shutdownTimeoutMs)
      // Then the queue: stop fetching jobs (waiting for handlers still running) and close its connections.
      await jobs.stop(config.shutdownTimeoutMs)
      await authCache.close()
      await readCache.close()
      await redis?.close()
      await orm.close()
    },
  }
  workflows.bind(createWorkflowNodeServices(runtime))
  // Every job is registered by now (the engines register theirs when they are created).
  if (options.worker ?? config.worker) await jobs.work()
  return runtime
}
