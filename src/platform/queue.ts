/**
 * The durable job queue (API.md section 1: a well-kept queue, never a home-made one): pg-boss on
 * the service's own database. PostgreSQL: pg-boss's own small pool on `DATABASE_URL`. PGlite:
 * pg-boss's `fromPglite` adapter on the ORM's PGlite instance (`backend: 'pglite'`); the ORM's
 * transactions lock that instance, so pg-boss's statements never land inside one of them.
 *
 * Started lazily: a process that never sends a job nor works the queue (most test files, a
 * short-lived CLI) never installs pg-boss's schema. A worker starts it at once when pg-boss's
 * schema already exists (jobs may be waiting), else on the first send or schedule.
 */
import { fromPglite, PgBoss, type Job, type PGliteLike } from 'pg-boss'
import { PgliteConnection } from '@mikro-orm/pglite'
import type { FastifyBaseLogger as Logger } from 'fastify'
import type { Config } from './config.ts'
import type { Orm } from './db.ts'

/** The queue of workflow executions: `{execution_id}` per job, job id = execution uuid. */
export const EXECUTION_QUEUE = 'workflow-execution'
/** The queue schedule triggers fire into: `{workflow_id}` per job. */
export const SCHEDULE_QUEUE = 'workflow-schedule'
/** pg-boss's schema name. */
const SCHEMA = 'pgboss'

/** A handler of one job's data. */
export type JobHandler<T> = (data: T) => Promise<void>

/** See the module comment. */
export class JobQueue {
  #boss: PgBoss | undefined
  #starting: Promise<PgBoss> | undefined
  #handlers: (() => Promise<void>)[] = []
  #stopped = false

  constructor(
    private readonly orm: Orm,
    private readonly config: Config,
    private readonly log: Logger,
  ) {}

  /** True once pg-boss's schema exists in the database (someone used the queue before). */
  async installed(): Promise<boolean> {
    const [row] = await this.orm.em.fork().execute<{ found: string | null }[]>(`select to_regclass(?) as found`, [`${SCHEMA}.job`])
    return row?.found != null
  }

  /** Starts pg-boss (installing or migrating its schema) once; later calls share the start. */
  start(): Promise<PgBoss> {
    this.#starting ??= this.#start()
    return this.#starting
  }

  async #start(): Promise<PgBoss> {
    const connection = this.orm.em.getConnection()
    const common = {
      schema: SCHEMA,
      application_name: 'agent-workspace-queue',
      // Jobs are small and their outcome lives in workflow_executions: keep pg-boss's tables lean.
      persistWarnings: false,
      monitorVacuum: false,
    }
    const boss =
      connection instanceof PgliteConnection
        ? new PgBoss({ ...common, db: fromPglite((await connection.getNativeClient()) as unknown as PGliteLike), backend: 'pglite', useListenNotify: true })
        : new PgBoss({ ...common, connectionString: this.config.databaseUrl, max: 4, useListenNotify: true })
    boss.on('error', (error) => this.log.error({ err: error }, 'job queue error'))
    await boss.start()
    const options = { retryLimit: 2, retryDelay: 1, retryBackoff: true, expireInSeconds: 86_400, heartbeatSeconds: 30, notify: true }
    await boss.createQueue(EXECUTION_QUEUE, options)
    await boss.createQueue(SCHEDULE_QUEUE, { ...options, retryLimit: 0 })
    this.#boss = boss
    for (const register of this.#handlers) await register()
    return boss
  }

  /**
   * Hands execution `executionId` to any worker. The job id is the execution's uuid, so sending
   * the same execution twice (the recovery sweep re-sending one) queues it once.
   * @param group the workspace's key (its id), for the per-workspace concurrency limit.
   */
  async sendExecution(executionId: number, executionUuid: string, group: string): Promise<void> {
    const boss = await this.start()
    await boss.send(EXECUTION_QUEUE, { execution_id: executionId }, { id: executionUuid, group: { id: group } })
  }

  /**
   * Works both queues in this process: executions (at most `WORKFLOW_CONCURRENCY` per workspace
   * across every worker, 10 at once here) and schedule firings.
   */
  async work(handlers: { execution: JobHandler<{ execution_id: number }>; schedule: JobHandler<{ workflow_id: number }> }): Promise<void> {
    const register = async () => {
      const boss = this.#boss!
      // NOTIFY wakes the workers when a job is sent; polling is only the backstop (each local
      // worker polls, so a fast poll costs an idle process real CPU, most on PGlite).
      const polling = { batchSize: 1, pollingIntervalSeconds: 2, notifyPollingIntervalSeconds: 10 }
      await boss.work<{ execution_id: number }>(
        EXECUTION_QUEUE,
        {
          ...polling,
          localConcurrency: 10,
          // pg-boss's count is read by each fetch, so two fetches at once can both see room: the
          // engine's claim enforces the limit exactly (engine.ts), this keeps most jobs from waiting.
          groupConcurrency: this.config.workflows.concurrency,
        },
        async (jobs: Job<{ execution_id: number }>[]) => {
          for (const job of jobs) await handlers.execution(job.data)
        },
      )
      await boss.work<{ workflow_id: number }>(SCHEDULE_QUEUE, { ...polling, localConcurrency: 2 }, async (jobs) => {
        for (const job of jobs) await handlers.schedule(job.data)
      })
    }
    this.#handlers.push(register)
    if (this.#boss) await register()
    else if (await this.installed()) await this.start()
  }

  /**
   * Fires `SCHEDULE_QUEUE` with `{workflow_id}` on `cron` in `timezone`, keyed by the workflow's
   * uuid (one schedule per workflow; pg-boss fires each period once across every process).
   */
  async schedule(key: string, cron: string, timezone: string, workflowId: number): Promise<void> {
    const boss = await this.start()
    await boss.schedule(SCHEDULE_QUEUE, cron, { workflow_id: workflowId }, { tz: timezone, key })
  }

  /** Removes the schedule `key` (a no-op when there is none or the queue was never used). */
  async unschedule(key: string): Promise<void> {
    if (!this.#boss && !(await this.installed())) return
    const boss = await this.start()
    await boss.unschedule(SCHEDULE_QUEUE, key)
  }

  /** Stops working and closes pg-boss's connections (waits up to `timeoutMs` for running jobs). */
  async stop(timeoutMs: number): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    if (!this.#starting) return
    const boss = await this.#starting.catch(() => undefined)
    await boss?.stop({ graceful: true, timeout: Math.max(1000, timeoutMs) })
  }
}
