/**
 * Process wiring shared by `npm start`, the worker, the tests and the benchmark: configuration
 * in, long-lived dependencies (ORM, Keyv cache, rate limiters, logger, job queue, engines) out.
 * The composition root: it hands the engines what they reach the services through (the workflow
 * engine's node services) and the job queue they register their jobs with.
 */
import { readFileSync } from 'node:fs'
import { Keyv } from 'keyv'
import type { Config } from './platform/config.ts'
import { createLogger, type Logger } from './platform/logger.ts'
import { migrate, openOrm, targetFromConfig, type Orm } from './platform/db.ts'
import { AUTH_CACHE_TTL_MS, AuthCache } from './platform/auth-cache.ts'
import { READ_CACHE_TTL_MS, ReadCache } from './platform/read-cache.ts'
import { JobQueue } from './platform/queue.ts'
import { watchQueueDepth } from './platform/queue-metrics.ts'
import { DueScheduler } from './platform/scheduler.ts'
import { RedisConnection } from './platform/redis.ts'
import type { AuthContext } from './context.ts'
import type { AppDeps } from './trpc/context.ts'
import { createRunDriver, RunManager } from './runs/index.ts'
import { WorkflowEngine } from './workflows/index.ts'
import { KnowledgeEngine } from './knowledge/index.ts'
import { CommandRoomEngine } from './command-room/index.ts'
import { createCommandRoomActor } from './command-room/index.ts'
import { createEventDataReader, WebhookEngine } from './webhooks/index.ts'
import { AuditRetention } from './audit/index.ts'
import { EvaluationEngine } from './evaluations/index.ts'
import { createWorkflowNodeServices } from './workflows/index.ts'
import { linkedWorkflows } from './workflows/index.ts'
import { InFlight } from './trpc/in-flight.ts'
import { hashServiceKeys } from './trpc/init.ts'
import { createRateLimits } from './trpc/rate-limit.ts'
import { flushTracing, startTracing } from './platform/tracing.ts'
import { traceModelCalls } from './models/index.ts'

/** The service's version (package.json), as traces name it (`service.version`). */
const SERVICE_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version

/**
 * What a shutdown asks of the process's front end (the HTTP host, src/http/app.ts) besides the
 * runtime's own work (docs/operations.md, "Shutdown").
 */
export interface Frontend {
  /** Stops taking new work: new requests are answered 503, streams are told to reconnect. */
  drain(): void
  /** Resolves once no request is in flight, or at `deadline` (epoch milliseconds). */
  idle(deadline: number): Promise<void>
  /** Requests in flight. */
  readonly active: number
  /** Stops listening and closes every connection left. */
  close(): Promise<void>
}

/**
 * Milliseconds a shutdown gives, once the grace period is over, to end what is still running
 * (runs and executions marked `interrupted`, executions handed back to the queue): it comes
 * before the database closes, so nothing is left `running`.
 */
export const HAND_OVER_MS = 2_000
/** Milliseconds the callers of interrupted work get to receive their answers before the connections close. */
export const ANSWER_MS = 1_000
/** Milliseconds closing the queue, caches, Redis and the database may take at most. */
export const RELEASE_MS = 1_500

/** Dependencies plus the means to release them. */
export interface Runtime extends AppDeps {
  /** The whole run manager (services see its port, `RunsPort`, src/runs/runs.port.ts). */
  runs: RunManager
  /** The whole workflow engine (services see its port, `WorkflowsPort`, src/workflows/workflows.port.ts). */
  workflows: WorkflowEngine
  /** The whole knowledge engine (services see its port, `KnowledgePort`, src/knowledge/knowledge.port.ts). */
  knowledge: KnowledgeEngine
  /** The command room engine (services see its port, `CommandRoomPort`, src/command-room/command-room.port.ts). */
  commandRoom: CommandRoomEngine
  /** The outbound webhook engine (services see its port, `WebhooksPort`, src/webhooks/webhooks.port.ts). */
  webhooks: WebhookEngine
  /** The evaluation engine (services see its port, `EvaluationsPort`, src/evaluations/evaluations.port.ts). */
  evaluations: EvaluationEngine
  /** The durable job queue (pg-boss) the engines register their jobs with. */
  jobs: JobQueue
  /** The one scheduler the engines register their due times with (src/platform/scheduler.ts). */
  scheduler: DueScheduler
  /**
   * Shuts down (docs/operations.md, "Shutdown"), within `SHUTDOWN_TIMEOUT_MS` plus
   * {@link HAND_OVER_MS}, {@link ANSWER_MS} and {@link RELEASE_MS}: drains `front` and the queue,
   * gives what is in flight the grace period, hands over what is still running, answers its
   * callers, then closes `front` and every connection. Never throws.
   */
  close: (front?: Frontend) => Promise<void>
}

/** `work` or, if it takes longer than `ms`, nothing: resolves either way (a failure is logged). */
async function within(ms: number, work: Promise<unknown>, log: Logger, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      log.warn({ ms }, `${what} took too long; going on`)
      resolve()
    }, ms)
  })
  await Promise.race([work.then(() => undefined, (error: unknown) => log.error({ err: error }, `${what} failed`)), late])
  clearTimeout(timer)
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
  // Before anything makes a span or an outbound request (docs/operations.md, "Traces").
  await startTracing(config.tracing, log, SERVICE_VERSION)
  traceModelCalls()
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
  const jobs = new JobQueue(orm, config, log)
  watchQueueDepth(jobs)
  const runs = await RunManager.create({ orm, config, log, readCache, jobs, redis })
  const scheduler = new DueScheduler(log)
  // Before the workflow engine, whose start-up recovery may start the queue: jobs register first.
  const knowledge = await KnowledgeEngine.create({ orm, config, log, jobs, scheduler })
  const commandRoom = CommandRoomEngine.create({ orm, config, log, jobs, scheduler })
  const webhooks = WebhookEngine.create({ orm, config, log, jobs, scheduler })
  const evaluations = EvaluationEngine.create({ orm, config, log, jobs, scheduler })
  const workflows = await WorkflowEngine.create({ orm, config, log, readCache, jobs, scheduler })
  AuditRetention.create({ orm, config, scheduler })
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
    linkedWorkflows,
    workflows,
    knowledge,
    commandRoom,
    webhooks,
    evaluations,
    jobs,
    scheduler,
    close: (front) => shutdown(runtime, front),
  }
  runs.bind(createRunDriver(runtime))
  workflows.bind(createWorkflowNodeServices(runtime))
  commandRoom.bind(createCommandRoomActor(runtime))
  webhooks.bind(createEventDataReader(runtime))
  evaluations.bind(runtime)
  // Every job is registered by now (the engines register theirs when they are created).
  if (options.worker ?? config.worker) await startWork(runtime)
  return runtime
}

/** What a process that works the queue starts: its workers, the knowledge sweep and the due times. */
async function startWork(runtime: Runtime): Promise<void> {
  await runtime.jobs.work()
  runtime.knowledge.startSweep()
  // Only processes that work the queue fire due times: what they record is theirs to work.
  runtime.commandRoom.start()
  await runtime.webhooks.start()
  runtime.scheduler.start()
}

/** {@link Runtime.close}: the steps of docs/operations.md, "Shutdown", each bounded. */
async function shutdown(runtime: Runtime, front: Frontend | undefined): Promise<void> {
  const { config, log, inFlight, runs, workflows, jobs, commandRoom, scheduler } = runtime
  const deadline = Date.now() + config.shutdownTimeoutMs
  // 1. Take no new work: requests get 503, streams reconnect elsewhere, no job is fetched.
  front?.drain()
  workflows.drain()
  await within(RELEASE_MS, Promise.all([scheduler.close(), commandRoom.close(), runtime.webhooks.close()]), log, 'stopping the scheduler')
  await within(RELEASE_MS, jobs.drain(), log, 'draining the queue')
  // 2. The grace period: requests, calls (their clients may have left), runs and executions in
  //    flight may finish. A call may start a run meanwhile: look again until all is quiet.
  const busy = () => (front?.active ?? 0) > 0 || inFlight.active > 0 || runs.activeCount > 0 || workflows.activeCount > 0
  while (busy() && Date.now() < deadline) {
    await Promise.all([front?.idle(deadline), inFlight.idle(deadline - Date.now()), runs.settled(deadline), workflows.settled(deadline)])
  }
  // 3. What still runs ends here, before anything closes: runs and executions end `interrupted`
  //    (with their final event), or executions go back to the queue.
  await within(HAND_OVER_MS, Promise.all([runs.interrupt(), workflows.interrupt()]), log, 'handing over')
  // 4. Their callers get the answers, then the connections close.
  await Promise.all([front?.idle(Date.now() + ANSWER_MS), inFlight.idle(ANSWER_MS)])
  if (front) await within(ANSWER_MS, front.close(), log, 'closing the HTTP server')
  // 5. The queue (no handler runs any more), caches, Redis and the database.
  await within(RELEASE_MS, release(runtime), log, 'closing connections')
  // The last spans (this shutdown's requests and runs) leave before the process does.
  await within(RELEASE_MS, flushTracing(), log, 'sending the last spans')
}

/** Closes the queue, the engines' timers and buses, the caches, Redis and the database. */
async function release({ jobs, runs, workflows, knowledge, authCache, readCache, redis, orm }: Runtime): Promise<void> {
  await jobs.stop(1_000)
  await knowledge.close()
  await runs.close()
  await workflows.close()
  await authCache.close()
  await readCache.close()
  await redis?.close()
  await orm.close()
}
