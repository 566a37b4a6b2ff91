/**
 * The runs of one process: starts executions detached from the request that
 * asked for them (a client that disconnects does not lose the answer), cancels them on request
 * from any process, waits for them on shutdown, and repairs runs a dead process left behind.
 *
 * Runs execute in the API process that accepted them rather than through the job queue: a
 * caller waiting for its answer (and the benchmark's 5 ms budget) cannot afford a queue's
 * polling delay. What a queue would add, surviving the process, the restart sweep covers: a run
 * still `queued`/`running` whose log has not moved for `LLM_TIMEOUT_MS` + 60 s is marked `failed`
 * (`interrupted`), so none stays `running` forever.
 */
import type { Config } from '../platform/config.ts'
import type { Orm } from '../platform/db.ts'
import type { ReadCache } from '../platform/read-cache.ts'
import type { CacheLog } from '../platform/subscriber.ts'
import { RunBus } from './run-bus.ts'
import { executeRun, RunInterruptedError } from './run-executor.ts'
import type { ModelCall, RunOutcome, RunPlan } from './run-types.ts'
import type { RedisClientType } from '@keyv/redis'

/** Seconds beyond `LLM_TIMEOUT_MS` after which a silent run counts as abandoned. */
const ABANDONED_GRACE_SECONDS = 60

/** See the module comment. */
export class RunManager {
  readonly bus: RunBus
  readonly #orm: Orm
  readonly #config: Config
  readonly #log: CacheLog
  readonly #readCache: ReadCache
  /** Cancel switches of the runs executing here, by run id. */
  readonly #active = new Map<number, AbortController>()
  /** Every execution and after-run job still under way here. */
  readonly #work = new Set<Promise<unknown>>()
  #sweepTimer: NodeJS.Timeout | undefined

  private constructor(bus: RunBus, o: { orm: Orm; config: Config; log: CacheLog; readCache: ReadCache }) {
    this.bus = bus
    this.#orm = o.orm
    this.#config = o.config
    this.#log = o.log
    this.#readCache = o.readCache
    bus.onCancel((runId) => this.#active.get(runId)?.abort())
  }

  /**
   * Opens the bus, marks abandoned runs failed and keeps doing so every minute.
   * @throws when Redis (given) cannot be reached.
   */
  static async create(o: { orm: Orm; config: Config; log: CacheLog; readCache: ReadCache; redis?: RedisClientType }): Promise<RunManager> {
    const manager = new RunManager(await RunBus.create({ redis: o.redis, log: o.log }), o)
    await manager.sweep()
    manager.#sweepTimer = setInterval(() => void manager.sweep(), 60_000)
    manager.#sweepTimer.unref()
    return manager
  }

  /** Number of runs executing in this process. */
  get activeCount(): number {
    return this.#active.size
  }

  /**
   * Starts the model `call` of a run in the background, while `stored` (its launch statement) may
   * still be under way, and answers the run's outcome when it ends (src/llm/run-executor.ts,
   * `executeRun`). Agent usage changed, so cached reads are dropped once it has.
   */
  start(call: ModelCall, stored: Promise<RunPlan>): Promise<RunOutcome> {
    const controller = new AbortController()
    // Cancels find the run by id, which it has once stored; none can name it before.
    const runId = stored.then(
      (plan) => {
        this.#active.set(plan.run.id, controller)
        return plan.run.id
      },
      () => null,
    )
    const deps = { orm: this.#orm, config: this.#config, bus: this.bus, log: this.#log }
    const execution = executeRun(deps, call, stored, controller.signal).finally(async () => {
      const id = await runId
      if (id !== null) this.#active.delete(id)
      await this.#readCache.written()
    })
    this.track(execution)
    return execution
  }

  /** Keeps `work` (an after-run job) in the set shutdown waits for; its failure is logged. */
  track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => this.#log.error({ err: error }, 'run work failed'))
    this.#work.add(tracked)
    void tracked.finally(() => this.#work.delete(tracked))
  }

  /** Asks whichever process executes run `runId` to stop it. */
  cancel(runId: number): Promise<void> {
    return this.bus.cancel(runId)
  }

  /** Marks runs whose process died `failed` (module comment); answers how many. */
  async sweep(): Promise<number> {
    const seconds = Math.ceil(this.#config.llm.timeoutMs / 1000) + ABANDONED_GRACE_SECONDS
    const error = JSON.stringify({ code: 'interrupted', message: 'The process running this run stopped before it finished' })
    try {
      // The final event too, so followers of the log end (the dead writer can no longer add one).
      const rows = await this.#orm.em.fork().execute<{ run_id: number }[]>(
        `with swept as (
           update runs set status = 'failed', error = ?::jsonb, finished_at = now(), updated_at = now(),
             events_count = (select coalesce(max(e.seq), 0) + 1 from run_events e where e.run_id = runs.id)
           where status in ('queued', 'running') and updated_at < now() - make_interval(secs => ?) returning id, uuid, events_count)
         insert into run_events (run_id, seq, type, data, created_at)
         select s.id, s.events_count, 'run.failed', jsonb_build_object('run_uuid', s.uuid, 'error', ?::jsonb), now() from swept s
         returning run_id`,
        [error, seconds, error],
      )
      return rows.length
    } catch (cause) {
      this.#log.warn({ err: cause }, 'run sweep failed')
      return 0
    }
  }

  /** Resolves once no run or after-run job is under way here, or at `deadline` (epoch milliseconds). */
  async settled(deadline: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))
    await Promise.race([Promise.all([...this.#work]), late])
    clearTimeout(timer)
  }

  /**
   * Interrupts the runs still executing here (they end `failed`, `interrupted`, with their final
   * event) and waits for them to record it, and for the after-run jobs.
   */
  async interrupt(): Promise<void> {
    for (const controller of this.#active.values()) controller.abort(new RunInterruptedError('The service shut down before the run finished'))
    await Promise.all([...this.#work])
  }

  /**
   * Waits up to `timeoutMs` for executions to end, interrupts the rest ({@link interrupt}), stops
   * sweeping and closes the bus.
   */
  async close(timeoutMs = 0): Promise<void> {
    await this.settled(Date.now() + timeoutMs)
    await this.interrupt()
    clearInterval(this.#sweepTimer)
    await this.bus.close()
  }
}
