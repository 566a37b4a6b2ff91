/**
 * The runs of one process: starts executions detached from the request that
 * asked for them (a client that disconnects does not lose the answer), cancels them on request
 * from any process, waits for them on shutdown, and repairs runs a dead process left behind.
 *
 * Runs execute in the API process that accepted them rather than through the job queue: a
 * caller waiting for its answer (and the benchmark's 5 ms budget) cannot afford a queue's
 * polling delay. What a queue would add, noticing that the process died, heartbeats give: every
 * `RUN_HEARTBEAT_MS` the process refreshes `heartbeat_at` of the runs it executes (one statement
 * for all of them), and every process sweeps as often: a run still `queued`/`running` whose
 * heartbeat (or, before its first beat, `updated_at`) is {@link MISSED_BEATS} beats old is
 * marked `failed` (`interrupted`) with its final event, so its followers end and none stays
 * `running`. With the default 3 s beat, that is within 12 s of the process's death. The same
 * heartbeat statement answers each run's status: a run canceled meanwhile by a process that could
 * not reach this one is stopped here, and one another process already ended is dropped.
 *
 * Runs that wait (docs/api/runs.md, "Approvals", "Busy threads") hold nothing here while they
 * wait: a run `awaiting_approval` and a `queued` run are rows. What makes them go on is a job of
 * the durable queue (pg-boss), which any process that works the queue takes: `runs.resume` once
 * a run's last pending approval is decided or expires, `runs.dispatch` when a run joins a busy
 * thread's queue (in case the thread's run ended meanwhile). A run that ends here starts its
 * thread's next queued run here at once. Their handlers claim the run in one statement (at most one
 * process wins; a thread's unique partial index on its active run keeps two runs of one thread
 * from running at once) and start it here through the {@link RunDriver} the runtime binds. The
 * same sweep that ends dead runs catches what a job could not carry: it expires approvals past
 * `expires_at`, and asks again for runs and threads left waiting with nothing to wait for (a
 * process that died between a decision and its job).
 */
import type { Config } from '../platform/config.ts'
import type { Orm } from '../platform/db.ts'
import type { ReadCache } from '../platform/read-cache.ts'
import type { CacheLog } from '../platform/subscriber.ts'
import { jsonValueOf } from '../access/wire.ts'
import { RunBus } from './run-bus.ts'
import { executeRun, RunInterruptedError, spendScopeOfPlan } from './run-executor.ts'
import { noteSpend } from '../usage/index.ts'
import { providerNameOf } from '../models/index.ts'
import { RunLostError } from './run-log.ts'
import { observeRunDuration } from './run-metrics.ts'
import type { ModelCall, Recovery, RunOutcome, RunPlan, TakeoverRequest } from './run-types.ts'
import type { RedisConnection } from '../platform/redis.ts'
import type { JobQueue } from '../platform/queue.ts'
import { inSpan, markSpanFailed, tracingEnabled } from '../platform/tracing.ts'
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_AGENT_VERSION,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
} from '@opentelemetry/semantic-conventions/incubating'

/** How the run manager starts runs that waited: the runs service's side, bound by the runtime (./run-driver.ts). */
export interface RunDriver {
  /** Claims run `runId` if it waits on nothing any more, and starts it again where it stopped. */
  resume(runId: number): Promise<void>
  /** Claims the oldest queued run of thread `threadId` if the thread is idle, and starts it. */
  dispatch(threadId: number): Promise<void>
  /** Claims runs whose process died and starts them here from their checkpoint; answers how many. */
  takeOver(request: TakeoverRequest): Promise<number>
}

/** Job names of the durable queue (module comment). */
const RESUME_JOB = 'runs.resume'
const DISPATCH_JOB = 'runs.dispatch'

/** Seconds a run or a thread may look stuck (nothing pending, nothing active) before the sweep asks for it again. */
const STUCK_SECONDS = 2

/** Heartbeats missed before a run counts as interrupted (its process died). */
export const MISSED_BEATS = 3

/** Claims of one run at most (its launch and two takeovers): a run whose process died that often fails `interrupted`. */
export const MAX_ATTEMPTS = 3

/** Runs one sweep of one process takes over at most (the rest wait for the next sweep, or another process's). */
const TAKEOVER_BATCH = 25

/**
 * Runs `execute` (a run's execution) inside an `invoke_agent <agent name>` span with the GenAI
 * conventions' agent attributes (docs/operations.md, "Traces"); a prompt run has no agent span,
 * its model calls sit under the caller's span. A run that ends failed marks the span failed with
 * its error code as `error.type`.
 */
function invokeAgentSpan(call: ModelCall, stored: Promise<RunPlan>, execute: () => Promise<RunOutcome>): Promise<RunOutcome> {
  const agent = call.invokedAgent
  if (!agent || !tracingEnabled()) return execute()
  return inSpan(
    `invoke_agent ${agent.name}`,
    {
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
        [ATTR_GEN_AI_AGENT_NAME]: agent.name,
        [ATTR_GEN_AI_AGENT_ID]: agent.uuid,
        [ATTR_GEN_AI_AGENT_VERSION]: String(agent.version),
        [ATTR_GEN_AI_REQUEST_MODEL]: call.model.llm.slug,
        [ATTR_GEN_AI_PROVIDER_NAME]: typeof call.model.model === 'string' ? call.model.providerSlug : providerNameOf(call.model.model.provider),
      },
    },
    async (span) => {
      void stored.then(
        (plan) => {
          span.setAttribute('run.uuid', plan.run.uuid)
          if (plan.threadUuid) span.setAttribute(ATTR_GEN_AI_CONVERSATION_ID, plan.threadUuid)
        },
        () => undefined,
      )
      const outcome = await execute()
      span.setAttribute('run.status', outcome.status)
      if (outcome.status === 'failed') markSpanFailed(span, outcome.error?.code ?? 'failed', outcome.error?.message)
      return outcome
    },
  )
}

/** See the module comment. */
export class RunManager {
  readonly bus: RunBus
  readonly #orm: Orm
  readonly #config: Config
  readonly #log: CacheLog
  readonly #readCache: ReadCache
  readonly #jobs: JobQueue
  #driver: RunDriver | null = null
  /** Cancel switches of the runs executing here and the claim each runs under, by run id. */
  readonly #active = new Map<number, { controller: AbortController; attempts: number }>()
  /** Every execution and after-run job still under way here. */
  readonly #work = new Set<Promise<unknown>>()
  #sweepTimer: NodeJS.Timeout | undefined
  #beatTimer: NodeJS.Timeout | undefined

  private constructor(bus: RunBus, o: { orm: Orm; config: Config; log: CacheLog; readCache: ReadCache; jobs: JobQueue }) {
    this.bus = bus
    this.#orm = o.orm
    this.#config = o.config
    this.#log = o.log
    this.#readCache = o.readCache
    this.#jobs = o.jobs
    bus.onCancel((runId) => this.#active.get(runId)?.controller.abort())
    // A claim is one short statement and the run then executes detached: a job ends at once.
    const policy = { retryLimit: 2, retryDelay: 1, batchSize: 8 }
    o.jobs.register<{ run_id: number }>(RESUME_JOB, (data) => this.#drive().resume(data.run_id), policy)
    o.jobs.register<{ thread_id: number }>(DISPATCH_JOB, (data) => this.#drive().dispatch(data.thread_id), policy)
  }

  /**
   * Hands over the runs service's side of resuming, dispatching and taking over (src/app.ts binds
   * it once services exist), and sweeps at once: runs a dead process left are taken over now.
   */
  bind(driver: RunDriver): void {
    this.#driver = driver
    void this.sweep()
  }

  #drive(): RunDriver {
    if (!this.#driver) throw new Error('The run manager has no driver bound')
    return this.#driver
  }

  /** Asks any process that works the queue to resume run `runId` (module comment). */
  requestResume(runId: number): Promise<void> {
    return this.#jobs.send(RESUME_JOB, { run_id: runId })
  }

  /** Asks any process that works the queue to start the next queued run of thread `threadId`. */
  requestDispatch(threadId: number): Promise<void> {
    return this.#jobs.send(DISPATCH_JOB, { thread_id: threadId })
  }

  /**
   * Opens the bus, marks interrupted runs failed, and from then on beats and sweeps every
   * `RUN_HEARTBEAT_MS` (module comment).
   * @throws when Redis (given) cannot be reached.
   */
  static async create(o: {
    orm: Orm
    config: Config
    log: CacheLog
    readCache: ReadCache
    jobs: JobQueue
    redis?: RedisConnection
  }): Promise<RunManager> {
    const manager = new RunManager(await RunBus.create({ redis: o.redis, log: o.log }), o)
    await manager.sweep()
    const beat = o.config.llm.heartbeatMs
    manager.#beatTimer = setInterval(() => void manager.#beat(), beat)
    manager.#beatTimer.unref()
    manager.#sweepTimer = setInterval(() => void manager.sweep(), beat)
    manager.#sweepTimer.unref()
    return manager
  }

  /** Number of runs executing in this process. */
  get activeCount(): number {
    return this.#active.size
  }

  /**
   * Starts the model `call` of a run in the background, while `stored` (its launch statement) may
   * still be under way, and answers the run's outcome when it ends (src/runs/run-executor.ts,
   * `executeRun`). Agent usage changed, so cached reads are dropped once it has.
   */
  start(
    call: ModelCall,
    stored: Promise<RunPlan>,
    o: { storedSeq?: number; recovered?: Recovery; checkBudget?: boolean } = {},
  ): Promise<RunOutcome> {
    const controller = new AbortController()
    // Cancels find the run by id, which it has once stored; none can name it before.
    const runId = stored.then(
      (plan) => {
        this.#active.set(plan.run.id, { controller, attempts: plan.run.attempts })
        return plan.run.id
      },
      () => null,
    )
    const deps = { orm: this.#orm, config: this.#config, bus: this.bus, log: this.#log }
    const began = performance.now()
    let ended = began
    const execution = invokeAgentSpan(call, stored, () => executeRun(deps, call, stored, controller.signal, o)).finally(async () => {
      ended = performance.now()
      const id = await runId
      if (id !== null) this.#active.delete(id)
      await this.#readCache.written()
    })
    this.track(execution)
    // The next run of its thread's queue starts once this one has ended (not while it waits):
    // here at once, its claim being atomic; through the queue should that fail.
    this.track(
      stored.then(
        async (plan) => {
          const outcome = await execution
          observeRunDuration(outcome, ended - began)
          // Its usage is stored: the budgets of its scope may have reached a threshold (docs/api/usage-and-budgets.md, "Alerts").
          if (plan.budgeted !== false) await noteSpend(this.#orm.em.fork(), this.#log, spendScopeOfPlan(plan))
          if (
            plan.threadId === null ||
            outcome.status === 'awaiting_approval' ||
            outcome.status === 'running' ||
            outcome.queuedNext === false
          )
            return
          const threadId = plan.threadId
          await this.#drive()
            .dispatch(threadId)
            .catch(() => this.requestDispatch(threadId))
        },
        () => undefined,
      ),
    )
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

  /**
   * Takes over runs whose process died (module comment), and marks `failed` (`interrupted`) those
   * that died {@link MAX_ATTEMPTS} times; answers how many it failed. Does nothing until a driver is bound.
   */
  async sweep(): Promise<number> {
    if (!this.#driver) return 0
    const staleSeconds = (this.#config.llm.heartbeatMs * MISSED_BEATS) / 1000
    const error = JSON.stringify({
      code: 'interrupted',
      message: 'The process running this run stopped before it finished, too often to go on',
    })
    const own = [...this.#active.keys()]
    try {
      await this.#driver.takeOver({ staleSeconds, own, maxAttempts: MAX_ATTEMPTS, limit: TAKEOVER_BATCH })
    } catch (cause) {
      this.#log.warn({ err: cause }, 'run takeover failed')
    }
    try {
      // The final event too, so followers of the log end (the dead writer can no longer add one).
      // Never this process's own runs: a late heartbeat (a busy event loop) is no death.
      const rows = await this.#orm.em.fork().execute<{ run_id: number; seq: number; data: unknown; created_at: Date | string }[]>(
        `with swept as (
           update runs set status = 'failed', error = ?::jsonb, finished_at = now(), updated_at = now(),
             events_count = (select coalesce(max(e.seq), 0) + 1 from run_events e where e.run_id = runs.id)
           where status = 'running' and coalesce(heartbeat_at, updated_at) < clock_timestamp() - make_interval(secs => ?)
             and not (id = any(string_to_array(?, ',')::bigint[])) and attempts >= ?
           returning id, uuid, events_count)
         insert into run_events (run_id, seq, type, data, created_at)
         select s.id, s.events_count, 'run.failed', jsonb_build_object('run_uuid', s.uuid, 'error', ?::jsonb), now() from swept s
         returning run_id::float8 as run_id, seq, data, created_at`,
        [error, staleSeconds, own.join(','), MAX_ATTEMPTS, error],
      )
      // Followers here (and, with Redis, elsewhere) get it at once rather than at their next look at the log.
      for (const row of rows) {
        const event = {
          seq: Number(row.seq),
          type: 'run.failed',
          data: jsonValueOf(row.data),
          created_at: new Date(row.created_at).toISOString(),
        }
        this.bus.publish(Number(row.run_id), [event])
      }
      await this.#unstick()
      return rows.length
    } catch (cause) {
      this.#log.warn({ err: cause }, 'run sweep failed')
      return 0
    }
  }

  /**
   * Expires pending approvals past `expires_at` (they count as denied), and asks again for the
   * runs that wait on nothing and the idle threads with a queue (module comment).
   */
  async #unstick(): Promise<void> {
    const em = this.#orm.em.fork()
    const [row] = await em.execute<{ runs: string | null; threads: string | null }[]>(
      `with expired as (
         update run_approvals set status = 'expired', reason = 'expired', decided_at = now(), updated_at = now()
         where status = 'pending' and expires_at <= now() returning run_id)
       select
         (select string_agg(r.id::text, ',') from runs r
          where r.status = 'awaiting_approval'
            -- What the update above expired still reads as pending in this statement.
            and not exists (select 1 from run_approvals a where a.run_id = r.id and a.status = 'pending' and a.expires_at > now())
            and (r.id in (select run_id from expired)
              or not exists (select 1 from run_approvals d where d.run_id = r.id and d.decided_at > now() - make_interval(secs => ?)))) as runs,
         (select string_agg(distinct q.thread_id::text, ',') from runs q
          where q.status = 'queued' and q.created_at < now() - make_interval(secs => ?)
            and not exists (select 1 from runs a where a.thread_id = q.thread_id and a.status in ('running', 'awaiting_approval'))) as threads`,
      [STUCK_SECONDS, STUCK_SECONDS],
    )
    for (const id of row?.runs?.split(',') ?? []) await this.requestResume(Number(id))
    for (const id of row?.threads?.split(',') ?? []) await this.requestDispatch(Number(id))
  }

  /**
   * Refreshes the heartbeat of the runs executing here (module comment); stops those canceled
   * meanwhile, and drops those another process has ended (this one's beats did not land in time).
   */
  async #beat(): Promise<void> {
    if (this.#active.size === 0) return
    const ids = [...this.#active.keys()]
    try {
      // Only under each run's claim: a run another process took over keeps that one's heartbeat.
      const rows = await this.#orm.em.fork().execute<{ id: number; status: string }[]>(
        `update runs r set heartbeat_at = clock_timestamp()
         from unnest(string_to_array(?, ',')::bigint[], string_to_array(?, ',')::int[]) as c(id, attempts)
         where r.id = c.id and r.attempts = c.attempts
         returning r.id::float8 as id, r.status`,
        [ids.join(','), ids.map((id) => this.#active.get(id)?.attempts ?? 0).join(',')],
      )
      const held = new Set(rows.map((row) => Number(row.id)))
      for (const row of rows) {
        const controller = this.#active.get(Number(row.id))?.controller
        if (row.status === 'canceled') controller?.abort()
        else if (row.status !== 'running' && row.status !== 'queued') controller?.abort(new RunLostError('Another process ended the run'))
      }
      for (const id of ids) if (!held.has(id)) this.#active.get(id)?.controller.abort(new RunLostError('Another process took the run over'))
    } catch (error) {
      this.#log.warn({ err: error }, 'run heartbeat failed')
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
    for (const { controller } of this.#active.values())
      controller.abort(new RunInterruptedError('The service shut down before the run finished'))
    await Promise.all([...this.#work])
  }

  /**
   * Waits up to `timeoutMs` for executions to end, interrupts the rest ({@link interrupt}), stops
   * beating and sweeping, and closes the bus.
   */
  async close(timeoutMs = 0): Promise<void> {
    await this.settled(Date.now() + timeoutMs)
    await this.interrupt()
    clearInterval(this.#sweepTimer)
    clearInterval(this.#beatTimer)
    await this.bus.close()
  }
}
