/**
 * The durable job queue (docs/api/conventions.md: a well-kept queue, never a home-made one): pg-boss on
 * the service's own database. PostgreSQL: pg-boss's own small pool on `DATABASE_URL`. PGlite:
 * pg-boss's `fromPglite` adapter on the ORM's PGlite instance (`backend: 'pglite'`); the ORM's
 * transactions lock that instance, so pg-boss's statements never land inside one of them.
 *
 * It knows no job by name: the module that owns a kind of background work registers it
 * ({@link JobQueue.register}: a name, a handler and its retry and concurrency policy) before the
 * queue starts, then sends ({@link JobQueue.send}) jobs
 * of that name. A process that works the queue ({@link JobQueue.work}) runs every registered job.
 *
 * Started lazily: a process that never sends a job nor works the queue (most test files, a
 * short-lived CLI) never installs pg-boss's schema. A worker starts it at once when pg-boss's
 * schema already exists (jobs may be waiting), else on the first send.
 */
import { databaseUnavailable } from './errors.ts'
import { fromPglite, PgBoss, type Job, type PGliteLike, type Queue, type WorkOptions } from 'pg-boss'
import { PgliteConnection } from '@mikro-orm/pglite'
import type { FastifyBaseLogger as Logger } from 'fastify'
import type { Config } from './config.ts'
import { KEEPALIVE_INITIAL_DELAY_MS, type Orm } from './db.ts'
import { contextOfCarrier, inSpan, SpanKind, traceCarrier, tracingEnabled } from './tracing.ts'

/**
 * The key of a job's data that carries the context of whoever sent it (W3C trace-context headers,
 * src/platform/tracing.ts), while tracing is on: its `job <name>` span is then that context's
 * child. Handlers never see it.
 */
const TRACE_KEY = '_trace'

/** `data` with the sender's trace context, when there is one to carry. */
function withTrace<T extends object>(data: T): T {
  const carrier = traceCarrier()
  return carrier ? { ...data, [TRACE_KEY]: carrier } : data
}

/**
 * Works `job` inside a `job <name>` span (docs/operations.md, "Traces"), a child of its sender's
 * context when it carried one; `work` gets the data without the carrier.
 */
function traced<T extends object>(job: Job<T>, work: (data: T) => Promise<void>): Promise<void> {
  const data = job.data as T & { [TRACE_KEY]?: Record<string, string> }
  const carried = data !== null && typeof data === 'object' && TRACE_KEY in data
  if (!carried && !tracingEnabled()) return work(job.data)
  const { [TRACE_KEY]: carrier, ...rest } = data
  // Never the context pg-boss's polling loop happened to start in (a request's, on a lazy start).
  const parent = contextOfCarrier(carrier)
  return inSpan(`job ${job.name}`, { kind: SpanKind.CONSUMER, attributes: jobAttributes(job), parent }, () => work(rest as T))
}

const jobAttributes = (job: Job<unknown>) => ({ 'job.name': job.name, 'job.id': job.id, 'job.retry_count': job.retryCount })

/** pg-boss's schema name. */
const SCHEMA = 'pgboss'

/** What a handler learns about the job it works besides its data. */
export interface JobInfo {
  /** The job's id (the `id` it was sent with, else one pg-boss made). */
  id: string
  /** The registered name. */
  name: string
  /** Attempts before this one (0 on the first). */
  retryCount: number
}

/**
 * Works one job. Resolving completes it; throwing fails this attempt, which is retried per the
 * job's {@link JobOptions} and then stays failed.
 */
export type JobHandler<T> = (data: T, job: JobInfo) => Promise<void>

/** The policy of a registered job: its retries, its time limits and how many run at once. */
export interface JobOptions {
  /** Attempts after a failed one (0: a failure is final). */
  retryLimit: number
  /** Seconds before the first retry (pg-boss's default: 0). */
  retryDelay?: number
  /** Doubles the delay per retry, with jitter (pg-boss's default: false). */
  retryBackoff?: boolean
  /** Seconds an attempt may stay active before it fails (pg-boss's default: 900). */
  expireInSeconds?: number
  /**
   * Seconds within which the worker of an active job must beat (it does so itself while the
   * handler runs); a job whose worker died fails then, and is retried. At least 10; default none.
   */
  heartbeatSeconds?: number
  /**
   * Fetchers of this name in this process (default 1): each fetches up to {@link batchSize} jobs,
   * works them, and fetches again.
   */
  localConcurrency?: number
  /**
   * Jobs one fetcher takes at once and works concurrently (default 1), each completed or failed
   * on its own. A fetch that came back full is followed by the next at once: a backlog (a
   * thousand firings due together) drains at the speed of the handlers, where single-job fetchers
   * waited for the queue's backlog count (refreshed every few seconds) or their next poll.
   */
  batchSize?: number
  /**
   * Jobs of one group (the `group` they were sent with) active at once across every process;
   * default no limit. pg-boss counts at each fetch, so two fetches at once may both see room.
   */
  groupConcurrency?: number
}

/** How {@link JobQueue.send} files a job. */
export interface SendOptions {
  /** The job's id, a UUID: sending a job whose id exists again queues nothing (deduplication). */
  id?: string
  /** The key its {@link JobOptions.groupConcurrency} limit counts by. */
  group?: string
}

/** A registered job: its policy, and how to work it on a started pg-boss. */
interface Registration {
  options: JobOptions
  work: (boss: PgBoss) => Promise<unknown>
}

/**
 * NOTIFY wakes the workers when a job is sent; polling is only the backstop (each local worker
 * polls, so a fast poll costs an idle process real CPU, most on PGlite). Seconds.
 */
const POLLING = {
  batchSize: 1,
  pollingIntervalSeconds: 2,
  // Also how long a retry waits past its delay at most (nothing notifies when a retry comes due).
  notifyPollingIntervalSeconds: 5,
  // A backlog (more ready jobs than a worker holds) is fetched without pause: without it, a worker
  // done with a job waited for the next poll, and 1,000 queued jobs took over 40 minutes to drain.
  burstWhenReadyExceeds: 1,
}

/**
 * Seconds between pg-boss's supervision passes, which (among other upkeep) fail active jobs whose
 * worker stopped beating (`heartbeatSeconds`) so they are retried; one process of the cluster does
 * each pass. With a 10 s heartbeat, a dead worker's jobs are released within 13 s (pg-boss's
 * default, 60 s, kept them for over a minute).
 */
const SUPERVISE_SECONDS = 3

/** A job of a name no module registered. */
export class UnknownJobError extends Error {
  override name = 'UnknownJobError'
  constructor(job: string) {
    super(`No job named "${job}" is registered with the queue`)
  }
}

/** See the module comment. */
export class JobQueue {
  readonly #jobs = new Map<string, Registration>()
  #boss: PgBoss | undefined
  #starting: Promise<PgBoss> | undefined
  #working = false
  #draining = false
  #stopped = false

  constructor(
    private readonly orm: Orm,
    private readonly config: Config,
    private readonly log: Logger,
  ) {}

  /**
   * Registers job `name`: its pg-boss queue is created with `options`' retry and time policy when
   * the queue starts, and {@link work} runs `handler` for each of its jobs. Call it before anything
   * starts the queue (the module that owns the job does so when it is created).
   * @throws Error when `name` is registered already or the queue has started.
   */
  register<T extends object>(name: string, handler: JobHandler<T>, options: JobOptions): void {
    if (this.#jobs.has(name)) throw new Error(`The job "${name}" is registered already`)
    if (this.#starting) throw new Error(`The job "${name}" is registered after the queue started`)
    const work: WorkOptions = {
      ...POLLING,
      ...(options.localConcurrency !== undefined ? { localConcurrency: options.localConcurrency } : {}),
      ...(options.groupConcurrency !== undefined ? { groupConcurrency: options.groupConcurrency } : {}),
    }
    const info = (job: Job<T>): JobInfo => ({ id: job.id, name: job.name, retryCount: job.retryCount })
    const run = (job: Job<T>) => traced(job, (data) => handler(data, info(job)))
    const batchSize = options.batchSize ?? 1
    this.#jobs.set(name, {
      options,
      work: (boss) =>
        batchSize > 1
          ? boss.work<T>(name, { ...work, batchSize, burstWhenBatchFull: true, perJobResults: true }, async (jobs: Job<T>[]) => {
              const settled = await Promise.allSettled(jobs.map(run))
              return settled.map((outcome, i) => ({
                id: jobs[i].id,
                status: outcome.status === 'fulfilled' ? ('completed' as const) : ('failed' as const),
                ...(outcome.status === 'rejected' ? { output: { message: outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason) } } : {}),
              }))
            })
          : boss.work<T>(name, work, async (jobs: Job<T>[]) => {
              for (const job of jobs) await run(job)
            }),
    })
  }

  /** True once pg-boss's schema exists in the database (someone used the queue before). */
  async installed(): Promise<boolean> {
    const [row] = await this.orm.em.fork().execute<{ found: string | null }[]>(`select to_regclass(?) as found`, [`${SCHEMA}.job`])
    return row?.found != null
  }

  /**
   * Starts pg-boss (installing or migrating its schema, creating the queue of every registered
   * job) once; later calls share the start. A process that works the queue starts its workers here.
   * @throws when the database cannot be reached.
   */
  start(): Promise<PgBoss> {
    this.#starting ??= this.#start()
    return this.#starting
  }

  async #start(): Promise<PgBoss> {
    const connection = this.orm.em.getConnection()
    const common = {
      schema: SCHEMA,
      application_name: 'agent-workspace-queue',
      superviseIntervalSeconds: SUPERVISE_SECONDS,
      monitorIntervalSeconds: SUPERVISE_SECONDS,
      // The ready counts the burst mode of POLLING reads are refreshed this often.
      queueCacheIntervalSeconds: SUPERVISE_SECONDS,
      // Jobs are small and their outcome lives in the owners' tables: keep pg-boss's tables lean.
      persistWarnings: false,
      monitorVacuum: false,
    }
    const boss =
      connection instanceof PgliteConnection
        ? new PgBoss({
            ...common,
            db: fromPglite((await connection.getNativeClient()) as unknown as PGliteLike),
            backend: 'pglite',
            useListenNotify: true,
          })
        : new PgBoss({ ...common, connectionString: this.config.databaseUrl, max: 4, useListenNotify: true, ...this.#poolDeadlines() })
    // A lost connection is an outage to watch, not a fault: pg-boss reconnects by itself, and
    // under a failover it reports one per pooled connection.
    boss.on('error', (error) => (databaseUnavailable(error) ? this.log.warn({ err: error }, 'job queue lost a database connection') : this.log.error({ err: error }, 'job queue error')))
    await boss.start()
    for (const [name, { options }] of this.#jobs) {
      // createQueue keeps a queue that exists as it is: a changed policy is applied by updateQueue.
      await boss.createQueue(name, queuePolicy(options))
      await boss.updateQueue(name, queuePolicy(options))
    }
    this.#boss = boss
    if (this.#working) await this.#workAll(boss)
    return boss
  }

  /**
   * The deadlines of pg-boss's own pool, as the service's (docs/operations.md, "Database
   * deadlines"): the connect deadline, which also bounds the wait for a free connection of the
   * pool (a request that queues a job answers 503 past it rather than hanging), and TCP keepalive.
   * pg-boss hands its options to `pg`'s Pool as they are; its types name only the first. No
   * statement deadline: pg-boss's own maintenance and schema upgrades may take long.
   */
  #poolDeadlines(): { connectionTimeoutMillis: number; keepAlive: boolean; keepAliveInitialDelayMillis: number } {
    return { connectionTimeoutMillis: this.config.databaseConnectTimeoutMs, keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS }
  }

  /**
   * Queues a job of `name` with `data` (a JSON object) for any process that works the queue.
   * @throws UnknownJobError for a name nobody registered; an error of the database when it cannot
   *   be reached.
   */
  async send<T extends object>(name: string, data: T, options: SendOptions = {}): Promise<void> {
    this.#known(name)
    const boss = await this.start()
    await boss.send(name, withTrace(data), {
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.group !== undefined ? { group: { id: options.group } } : {}),
    })
  }

  /**
   * Queues many jobs of `name` in one statement (one round trip and one commit, however many): for
   * a module that records a batch of work at once. A job whose `id` exists already is skipped, as
   * by {@link send}.
   * @throws as {@link send}.
   */
  async sendMany<T extends object>(name: string, jobs: readonly ({ data: T } & SendOptions)[]): Promise<void> {
    this.#known(name)
    if (jobs.length === 0) return
    const boss = await this.start()
    await boss.insert(
      name,
      jobs.map((job) => ({
        data: withTrace(job.data),
        ...(job.id !== undefined ? { id: job.id } : {}),
        ...(job.group !== undefined ? { group: { id: job.group } } : {}),
      })),
    )
  }

  /**
   * Queues a job of `name` with `data` under `options.id` unless a job with that id is waiting or
   * running: one that has ended (completed, failed, cancelled) is replaced. For a job whose work may
   * have been lost (its owner re-sends it after a while): it is queued again, never twice.
   * @throws as {@link send}.
   */
  async ensure<T extends object>(name: string, data: T, options: SendOptions & { id: string }): Promise<void> {
    this.#known(name)
    const boss = await this.start()
    const send = () => boss.send(name, withTrace(data), { id: options.id, ...(options.group !== undefined ? { group: { id: options.group } } : {}) })
    if (await send()) return
    const [job] = await boss.findJobs(name, { id: options.id })
    if (!job || !['completed', 'failed', 'cancelled'].includes(job.state)) return
    await boss.deleteJob(name, options.id)
    await send()
  }

  /**
   * Fails the jobs of `name` among `ids` that are active, for a worker that died holding them (its
   * owner knows by its own heartbeats, before the queue's supervision does): each is retried per
   * its policy, and the slot it held in its group is free at once. A job that has moved on since
   * (completed, retried) is left alone. A no-op when the queue was never used.
   */
  async release(name: string, ids: string[], reason: string): Promise<void> {
    this.#known(name)
    if (!this.#boss && !(await this.installed())) return
    const boss = await this.start()
    const active = []
    for (const id of ids) {
      for (const job of await boss.findJobs(name, { id })) if (job.state === 'active') active.push({ id: job.id, retryCount: job.retryCount })
    }
    if (active.length > 0) await boss.fail(name, active, { message: reason })
  }

  /**
   * Removes every pg-boss schedule of `name` (schedules left by an earlier version; due times now
   * live with the modules, src/platform/scheduler.ts). A no-op when the queue was never installed.
   */
  async dropSchedules(name: string): Promise<void> {
    if (!this.#boss && !(await this.installed())) return
    // Read directly, so a process with nothing to drop (every one after the first start) does not start pg-boss for it.
    const [left] = await this.orm.em.fork().execute(`select 1 as found from ${SCHEMA}.schedule where name = ? limit 1`, [name])
    if (!left) return
    const boss = await this.start()
    for (const schedule of await boss.getSchedules(name)) await boss.unschedule(name, schedule.key)
  }

  /**
   * Works every registered job in this process, each with its `localConcurrency` and
   * `groupConcurrency`: at once when the queue runs or pg-boss's schema exists (jobs may be
   * waiting), else when something first starts it. Later calls do nothing.
   */
  async work(): Promise<void> {
    if (this.#working) return
    this.#working = true
    if (this.#boss) await this.#workAll(this.#boss)
    else if (this.#starting) await this.#starting
    else if (await this.installed()) await this.start()
  }

  async #workAll(boss: PgBoss): Promise<void> {
    if (this.#draining) return
    for (const { work } of this.#jobs.values()) await work(boss)
  }

  /**
   * Stops fetching jobs in this process (the first step of a shutdown); the handlers running now
   * go on, and sending still works. {@link stop} closes the queue afterwards.
   */
  async drain(): Promise<void> {
    if (this.#draining) return
    this.#draining = true
    if (!this.#working || !this.#boss) return
    const boss = this.#boss
    await Promise.all([...this.#jobs.keys()].map((name) => boss.offWork(name, { wait: false })))
  }

  /**
   * Jobs waiting per registered name (queued, or deferred until a retry's delay), as pg-boss last
   * counted them (every few seconds); empty while pg-boss is not running here, which this never
   * starts. Read by `job_queue_depth` (./queue-metrics.ts).
   */
  async waiting(): Promise<Map<string, number>> {
    if (!this.#boss || this.#stopped) return new Map()
    const queues = await this.#boss.getQueues([...this.#jobs.keys()])
    return new Map(queues.map((queue) => [queue.name, queue.queuedCount]))
  }

  #known(name: string): void {
    if (!this.#jobs.has(name)) throw new UnknownJobError(name)
  }

  /**
   * Stops working and closes pg-boss's connections, waiting up to `timeoutMs` (at least 1000) for
   * jobs running here; once (later calls return at once). Sending afterwards is an error.
   */
  async stop(timeoutMs: number): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    if (!this.#starting) return
    const boss = await this.#starting.catch(() => undefined)
    await boss?.stop({ graceful: true, timeout: Math.max(1000, timeoutMs) })
  }
}

/** The pg-boss queue options of a job's policy (every queue notifies its workers of new jobs). */
function queuePolicy(options: JobOptions): Omit<Queue, 'name'> {
  const { retryLimit, retryDelay, retryBackoff, expireInSeconds, heartbeatSeconds } = options
  const policy: Omit<Queue, 'name'> = { retryLimit, notify: true }
  if (retryDelay !== undefined) policy.retryDelay = retryDelay
  if (retryBackoff !== undefined) policy.retryBackoff = retryBackoff
  if (expireInSeconds !== undefined) policy.expireInSeconds = expireInSeconds
  if (heartbeatSeconds !== undefined) policy.heartbeatSeconds = heartbeatSeconds
  return policy
}
