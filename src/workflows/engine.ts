/**
 * The workflow engine of one process (docs/api/conventions.md and docs/api/workflows.md).
 *
 * - Every execution is stored before it starts (store.ts). One a caller waits for (a manual run,
 *   a webhook whose graph responds) runs here at once ({@link WorkflowEngine.runHere}); the
 *   others (background runs, webhooks without a response node, retries) go through the durable
 *   queue (src/platform/queue.ts, pg-boss) as {@link EXECUTION_JOB} jobs, so any worker (`npm run
 *   worker`, or `npm start` unless `WORKER=false`) runs them ({@link WorkflowEngine.enqueue}).
 *   Schedule triggers are due times of the process's one scheduler (./schedules.ts): each due time
 *   records one queued execution (mode `schedule`, `scheduled_at` the due time) across every
 *   process. The engine registers its job with the queue the runtime hands it.
 * - The stored `queued` row is the outbox of its job ({@link WorkflowEngine.runQueued}): once the
 *   row is stored the caller is answered (202), whether or not the job could be sent; a send that
 *   failed is tried again in the background, and the sweep sends the job of any execution still
 *   queued after {@link REQUEUE_AFTER_SECONDS} that has none. A job sent twice queues once (its id
 *   is fixed per claim), and a job whose execution was claimed already does nothing, so the
 *   execution runs once.
 * - The process running an execution refreshes its `heartbeat_at` every `WORKFLOW_HEARTBEAT_MS`;
 *   the same statement tells it which of its executions were canceled meanwhile (by any process)
 *   so it stops them, and which it no longer holds (another process took them over) so it drops
 *   them. The recovery sweep (at start and at every heartbeat, in every process) takes `running`
 *   executions whose heartbeat is three beats old (their process died): those whose workflow says
 *   `settings.on_interrupt: resume` go back to the queue ({@link handOverJobId}), to resume from
 *   their checkpoint, the others end `failed` (`abandoned`). A queued execution whose job went
 *   missing is sent again. None stays `running` forever, none runs twice: a worker claims an
 *   execution with a conditional update that counts its `attempts`, and only the current claimant
 *   beats for it, stores its progress or settles it.
 * - Progress: an execution of a workflow with `on_interrupt: resume` stores its checkpoint (the
 *   nodes that finished, its view of the static data) after each node that ran, so it can resume
 *   there; the static data its nodes wrote is already stored (static-data.ts), never by a resumption.
 * - Shutdown waits for executions running here, then hands those of workflows with
 *   `on_interrupt: resume` back to the queue with their checkpoint, and ends the rest `failed`
 *   (`interrupted`).
 * - A lost database connection (docs/operations.md, "Database deadlines") does not end an
 *   execution: its insert answers the row it stored, once (store.ts); its claim and a node's
 *   change of static data are transactions that take effect once (`transactionOnce`,
 *   src/platform/transaction-once.ts); its checkpoints, hand-back, end and the sweep's statements
 *   run again on a new connection, each being safe to run twice or checked first (`writeOnce`).
 * - Nodes reach the services only through the {@link WorkflowServices} port the runtime binds
 *   ({@link WorkflowEngine.bind}); the engine imports no service.
 */
import pLimit from 'p-limit'
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from '../platform/logger.ts'
import type { Config } from '../platform/config.ts'
import { queries, retryOnConnectionLoss, writeOnce, type Em, type Orm } from '../platform/db.ts'
import { transactionOnce } from '../platform/transaction-once.ts'
import type { JobOptions, JobQueue } from '../platform/queue.ts'
import { isRecord, jsonRecordOf, jsonValueOf, storableJson } from '../access/wire.ts'
import type { ReadCache } from '../platform/read-cache.ts'
import {
  executeGraph,
  ExecutionCanceledError,
  ExecutionInterruptedError,
  type Checkpoint,
  type ExecutionHooks,
  type ExecutionPlan,
  type ExecutionResult,
} from './executor.ts'
import { activeTraceId, inSpan, markSpanFailed, tracingEnabled } from '../platform/tracing.ts'
import { triggerOf } from './node-types.ts'
import { ExecutionStore, type ExecutionRecord } from './store.ts'
import { changeStaticData, type StaticDataChanger } from './static-data.ts'
import type { WebhookResponse, WorkflowServices } from './types.ts'
import type { ExecutionMode } from '../../entities/index.ts'
import { toDate } from '../platform/sql.ts'
import type { DueScheduler } from '../platform/scheduler.ts'
import { WorkflowSchedules } from './schedules.ts'
import { countExecutionEnds } from './execution-metrics.ts'

/** Advisory lock namespace of the per-workspace concurrency check (the second key is the workspace id). */
const CONCURRENCY_LOCK = 60_601
/** How long a claim waits for room in its workspace before trying again, in milliseconds. */
const CLAIM_RETRY_MS = 200

/** Heartbeats missed before an execution counts as interrupted (its process died). */
const MISSED_BEATS = 3
/**
 * Seconds a queued execution may wait before the sweep makes sure its job exists (sending it
 * again only when it is missing or ended, so never twice): the backstop of a send that failed.
 */
const REQUEUE_AFTER_SECONDS = 15
/** Times an interrupted execution is resumed at most (`on_interrupt: resume`); the next interruption fails it. */
export const MAX_RESUMES = 3

/**
 * The job that runs a queued execution: `{execution_id}`, group = its workspace id, job id =
 * {@link handOverJobId}.
 */
export const EXECUTION_JOB = 'workflow-execution'
/**
 * The job name pg-boss's own scheduler fired schedule triggers under before they moved to the
 * one scheduler: its leftover schedules are dropped at start.
 */
const LEGACY_SCHEDULE_JOB = 'workflow-schedule'

/**
 * Retries and time limits of an execution's job (retried twice).
 * The worker of an active job beats every 5 s; one silent for 10 s (its worker died) is failed by
 * the queue's supervision (src/platform/queue.ts) and retried, which frees its workspace's slot.
 */
const JOB_POLICY = { retryLimit: 2, retryDelay: 1, retryBackoff: true, expireInSeconds: 86_400, heartbeatSeconds: 10 } satisfies JobOptions

/**
 * The id of the job that runs an execution after `attempts` claims: its uuid for the first (so
 * sending it twice queues it once), then a uuid derived from both for each hand-over, so a
 * hand-over never collides with the job of the claim before it (that one may still be active, its
 * worker dead).
 */
export function handOverJobId(uuid: string, attempts: number): string {
  if (attempts <= 0) return uuid
  const hex = createHash('sha256').update(`${uuid}/${attempts}`).digest('hex')
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** What an execution needs to be sent to the queue. */
type Queueable = Pick<ExecutionRecord, 'id' | 'uuid' | 'workspaceId'> & { attempts?: number }

/** A claimed execution that resumes: where from, and how long it had run before, in milliseconds. */
interface Resumption {
  checkpoint: Checkpoint | null
  elapsedMs: number
}

/** The services port of an engine nobody bound: every call fails (the node fails `internal`). */
const UNBOUND: WorkflowServices = {
  runPrompt: () => Promise.reject(new Error('The workflow engine is not bound to the app')),
  runAgent: () => Promise.reject(new Error('The workflow engine is not bound to the app')),
  accountCredential: () => Promise.reject(new Error('The workflow engine is not bound to the app')),
}

/** The parts of a `workflows` row an execution needs. */
export interface RunnableWorkflow {
  id: number
  uuid: string
  /** Its name, as its executions' spans name it (docs/operations.md, "Traces"). */
  name: string
  workspaceId: number
  userId: number
  isActive: boolean
  nodes: unknown[]
  edges: unknown[]
  settings: Record<string, unknown>
  staticData: Record<string, unknown>
  pinData: Record<string, unknown>
}

/**
 * Runs `execute` (an execution's graph) inside a `workflow_execution <workflow name>` span
 * (docs/operations.md, "Traces"); its nodes' spans are its children (./executor.ts). A result
 * other than `succeeded` marks the span failed with the error's code.
 */
function executionSpan(workflow: RunnableWorkflow, record: ExecutionRecord, execute: () => Promise<ExecutionResult>): Promise<ExecutionResult> {
  if (!tracingEnabled()) return execute()
  const attributes = {
    'workflow.uuid': workflow.uuid,
    'workflow.name': workflow.name,
    'workflow.execution.uuid': record.uuid,
    'workflow.execution.mode': record.mode,
  }
  return inSpan(`workflow_execution ${workflow.name}`, { attributes }, async (span) => {
    const result = await execute()
    span.setAttribute('workflow.execution.status', result.status)
    if (result.status !== 'succeeded') markSpanFailed(span, result.error?.code ?? result.status, result.error?.message)
    return result
  })
}

/** Columns (alias `w`) that {@link toRunnable} reads. */
export const RUNNABLE_COLUMNS = `w.id::float8 as id, w.uuid, w.name, w.workspace_id::float8 as "workspaceId",
  w.user_id::float8 as "userId", w.is_active as "isActive", w.nodes, w.edges, w.settings, w.static_data as "staticData",
  w.pin_data as "pinData"`

/** A row selected with {@link RUNNABLE_COLUMNS} as a {@link RunnableWorkflow}. */
export function toRunnable(row: Record<string, unknown>): RunnableWorkflow {
  const list = (value: unknown) => {
    const parsed = jsonValueOf(value)
    return Array.isArray(parsed) ? parsed : []
  }
  return {
    id: Number(row.id),
    uuid: String(row.uuid),
    name: String(row.name),
    workspaceId: Number(row.workspaceId),
    userId: Number(row.userId),
    isActive: Boolean(row.isActive),
    nodes: list(row.nodes),
    edges: list(row.edges),
    settings: jsonRecordOf(row.settings),
    staticData: jsonRecordOf(row.staticData),
    pinData: jsonRecordOf(row.pinData),
  }
}

/**
 * Workflow `workflowId` as a {@link RunnableWorkflow}, or null when no row matches.
 * @param where more conditions on `w` (`and w.deleted_at is null`), SQL without parameters.
 */
export async function loadRunnable(em: Em, workflowId: number, where = ''): Promise<RunnableWorkflow | null> {
  const [row] = await em.execute<Record<string, unknown>[]>(`select ${RUNNABLE_COLUMNS} from workflows w where w.id = ? ${where}`, [
    workflowId,
  ])
  return row ? toRunnable(row) : null
}

/** The type of a workflow's trigger node, or null when it has none. */
export function triggerTypeOf(workflow: Pick<RunnableWorkflow, 'nodes'>): string | null {
  return triggerOf(workflow.nodes)?.type ?? null
}

/** What triggers an execution: how, as whom, with which input. */
export interface Trigger {
  mode: ExecutionMode
  /** The user the execution acts as. */
  userId: number
  /** The trigger node's input. */
  input: unknown
  /** The id of the execution this one retries (mode `retry`). */
  retryOf?: number
  /** Linked-workflow calls of agent runs above this execution (NodeContext's `execution.toolDepth`); runs here only. */
  toolDepth?: number
  /** The execution's uuid, chosen by the caller before it is stored (store.ts, `NewExecution.uuid`). */
  uuid?: string
}

/**
 * How an execution started here ended: its result, or (`handedOver`) that this process shut down
 * under it and handed it back to the queue, `queued`, to resume elsewhere.
 */
export type ExecutionOutcome = ExecutionResult & { handedOver?: boolean }

/** An execution started here: its row, its end, and the webhook response if a node sends one. */
export interface StartedExecution {
  record: ExecutionRecord
  /** Settles when the execution has ended and is stored (or was handed over). */
  done: Promise<ExecutionOutcome>
  /** The first `respond_to_webhook` response, or null when the execution ended without one. */
  response: Promise<WebhookResponse | null>
}

/** How long a process serves a webhook's workflow without reading it again, in milliseconds. */
export const WEBHOOK_CACHE_TTL_MS = 1_000
const WEBHOOK_CACHE_MAX = 10_000

/**
 * The workflows of recently called webhook tokens, in this process, for at most
 * {@link WEBHOOK_CACHE_TTL_MS}: a busy webhook costs one query per second instead of one per
 * call. A save through this process drops the workflow's entries at once ({@link forget}); another
 * process sees a change (deactivation, a new secret, a new graph) within the TTL. Static data a
 * node here stores is written into the entry too. A read that raced with a `forget` is not
 * stored (generation counter).
 */
export class WebhookCache {
  readonly #entries = new Map<string, { workflow: RunnableWorkflow; expires: number }>()
  #generation = 0

  get generation(): number {
    return this.#generation
  }

  get(token: string): RunnableWorkflow | undefined {
    const entry = this.#entries.get(token)
    if (!entry) return undefined
    if (entry.expires > Date.now()) return entry.workflow
    this.#entries.delete(token)
    return undefined
  }

  set(token: string, workflow: RunnableWorkflow, generation: number): void {
    if (generation !== this.#generation) return
    if (this.#entries.size >= WEBHOOK_CACHE_MAX) this.#entries.clear()
    this.#entries.set(token, { workflow, expires: Date.now() + WEBHOOK_CACHE_TTL_MS })
  }

  /** Drops the entries of workflow `workflowId` (under any token, an old one included). */
  forget(workflowId: number): void {
    this.#generation++
    for (const [token, { workflow }] of this.#entries) if (workflow.id === workflowId) this.#entries.delete(token)
  }

  /** Gives cached copies of workflow `workflowId` the static data a node just stored. */
  staticDataStored(workflowId: number, staticData: Record<string, unknown>): void {
    for (const { workflow } of this.#entries.values()) if (workflow.id === workflowId) workflow.staticData = staticData
  }
}

/** See the module comment. */
export class WorkflowEngine {
  /** Where execution rows are written (group commits, see store.ts). */
  readonly store: ExecutionStore
  /** Workflows of recently called webhooks (see {@link WebhookCache}). */
  readonly webhooks = new WebhookCache()
  /** The schedule triggers' due times (./schedules.ts). */
  readonly schedules: WorkflowSchedules
  #services: WorkflowServices = UNBOUND
  /** Cancel switches of the executions running here, by execution id. */
  readonly #active = new Map<number, AbortController>()
  /** Every execution under way here, for shutdown. */
  readonly #work = new Set<Promise<unknown>>()
  /** The claim (`attempts`) under which each execution running here runs, by execution id. */
  readonly #claims = new Map<number, number>()
  #heartbeat: NodeJS.Timeout | undefined
  #sweepTimer: NodeJS.Timeout | undefined
  /** Sweeps one at a time (`p-limit`): a call while one is under way runs after it, and the timer skips its turn. */
  readonly #sweeps = pLimit(1)
  /** Draining (shutdown): jobs that arrive, and claims still waiting for room, give up. */
  #draining = false
  /** Interrupting (shutdown): executions still running are stopped and handed over or failed. */
  #closing = false

  private constructor(
    private readonly orm: Orm,
    private readonly config: Config,
    private readonly log: Logger,
    private readonly readCache: ReadCache,
    /** The process's job queue, which the engine's job is registered with. */
    private readonly jobs: JobQueue,
    scheduler: DueScheduler,
  ) {
    this.store = new ExecutionStore(orm)
    this.schedules = new WorkflowSchedules(orm, log, scheduler, (execution) => this.#relay(execution))
  }

  /**
   * Registers {@link EXECUTION_JOB} with `jobs` (which the runtime starts working in a worker
   * process) and the schedule triggers' due times with `scheduler`, writes the due times of
   * workflows saved before they had any and drops pg-boss schedules left from before, sweeps
   * once and keeps sweeping every few heartbeats.
   * @throws when the database cannot be reached; Error when `jobs` has started or holds the job.
   */
  static async create(o: {
    orm: Orm
    config: Config
    log: Logger
    readCache: ReadCache
    jobs: JobQueue
    scheduler: DueScheduler
  }): Promise<WorkflowEngine> {
    const engine = new WorkflowEngine(o.orm, o.config, o.log, o.readCache, o.jobs, o.scheduler)
    o.jobs.register<{ execution_id: number }>(EXECUTION_JOB, ({ execution_id }) => engine.#runQueued(execution_id), {
      ...JOB_POLICY,
      localConcurrency: 10,
      // pg-boss's count is read by each fetch, so two fetches at once can both see room: the
      // engine's claim enforces the limit exactly (#claim), this keeps most jobs from waiting.
      groupConcurrency: o.config.workflows.concurrency,
    })
    await engine.schedules.reconcile()
    await o.jobs.dropSchedules(LEGACY_SCHEDULE_JOB)
    await engine.sweep()
    const beat = o.config.workflows.heartbeatMs
    engine.#heartbeat = setInterval(() => void engine.#beat(), beat)
    engine.#heartbeat.unref()
    engine.#sweepTimer = setInterval(() => {
      if (engine.#sweeps.activeCount === 0) void engine.sweep()
    }, beat)
    engine.#sweepTimer.unref()
    return engine
  }

  /**
   * Gives the engine what its nodes call on the services (run prompt, run agent, accounts of an
   * HTTP request); until then those nodes fail.
   */
  bind(services: WorkflowServices): void {
    this.#services = services
  }

  /** Number of executions running in this process. */
  get activeCount(): number {
    return this.#active.size
  }

  /**
   * Records an execution `running` here and runs it now (a caller waits for it).
   * @param o.userId the user the execution acts as; `mode` what triggered it; `input` the trigger's input.
   */
  async runHere(workflow: RunnableWorkflow, o: Trigger): Promise<StartedExecution> {
    return this.#start(workflow, await this.#record(workflow, o, 'running'), o.input, undefined, o.toolDepth)
  }

  /**
   * Records an execution `queued` and sends its job ({@link #relay}): once the row is stored it
   * answers it, job sent or not (module comment: the row is the job's outbox), so no caller is
   * answered 503 for an execution that then runs.
   * @throws as {@link ExecutionStore.insert} (then nothing was stored).
   */
  async runQueued(workflow: Pick<RunnableWorkflow, 'id'>, o: Trigger): Promise<ExecutionRecord> {
    const record = await this.#record(workflow, o, 'queued')
    await this.#relay(record)
    return record
  }

  #record(workflow: Pick<RunnableWorkflow, 'id'>, o: Trigger, status: 'queued' | 'running'): Promise<ExecutionRecord> {
    return this.store.insert({
      workflowId: workflow.id,
      userId: o.userId,
      mode: o.mode,
      input: o.input,
      status,
      retryOf: o.retryOf,
      uuid: o.uuid,
      traceId: activeTraceId(),
    })
  }

  /**
   * Hands a `queued` execution (already stored, see store.ts) to the durable queue; any worker
   * runs it. Its concurrency group is its workspace id (the same key wherever it is sent from).
   */
  async enqueue(record: Queueable): Promise<void> {
    // The job id is fixed per claim ({@link handOverJobId}), so sending the same execution twice
    // (the recovery sweep re-sending one) queues it once.
    const id = handOverJobId(record.uuid, record.attempts ?? 0)
    await this.jobs.send(EXECUTION_JOB, { execution_id: record.id }, { id, group: String(record.workspaceId) })
  }

  /**
   * {@link enqueue} for a stored `queued` execution; never throws. A send that fails is tried
   * again in the background while the queue's database is unreachable (`retryOnConnectionLoss`,
   * up to `DATABASE_RETRY_MS`); one that still fails is logged, and the sweep sends the job once
   * the execution has waited {@link REQUEUE_AFTER_SECONDS} ({@link #resendLost}).
   */
  async #relay(record: Queueable): Promise<void> {
    const notSent = (error: unknown) => this.log.warn({ err: error, execution: record.uuid }, 'execution job not sent; the sweep will send it')
    try {
      await this.enqueue(record)
    } catch (error) {
      this.log.info({ err: error, execution: record.uuid }, 'execution job not sent; sending it again')
      void retryOnConnectionLoss(() => this.enqueue(record)).catch(notSent)
    }
  }

  /** Stops execution `executionId` if it runs in this process (its row was already marked `canceled`). */
  abort(executionId: number): void {
    this.#active.get(executionId)?.abort(new ExecutionCanceledError('The execution was canceled'))
  }

  /**
   * Called after every save or delete of a workflow: drops it from the webhook cache, and writes
   * or removes its schedule's due time (./schedules.ts).
   */
  async syncSchedule(workflowId: number): Promise<void> {
    this.webhooks.forget(workflowId)
    await this.schedules.sync(workflowId)
  }

  /**
   * Takes the executions whose process died (module comment): sends those of workflows with
   * `on_interrupt: resume` back to the queue and fails the others (`abandoned`); re-sends lost
   * queued ones. Answers how many were failed. A call while a sweep is under way runs after it.
   */
  sweep(): Promise<number> {
    return this.#sweeps(() => this.#sweepOnce())
  }

  /**
   * One {@link sweep}; never throws (a failure is logged, the next sweep tries again). Each
   * statement runs again on a new connection when its connection is lost: run twice, each finds
   * only what the first left (an execution resumed or failed is no longer `running`), and what a
   * lost answer hid is found later (a resumed execution whose job was not sent, by
   * {@link #resendLost}; a dead job not released, by the queue's supervision).
   */
  async #sweepOnce(): Promise<number> {
    const em = this.orm.em.fork()
    try {
      const staleSeconds = (this.config.workflows.heartbeatMs * MISSED_BEATS) / 1000
      // Never this process's own executions: a late heartbeat (a busy event loop) is no death.
      const own = [...this.#active.keys()].join(',')
      const resumed = await retryOnConnectionLoss(() => em.execute<{ id: number; uuid: string; workspaceId: number; attempts: number }[]>(
        `update workflow_executions e set status = 'queued', heartbeat_at = clock_timestamp(), updated_at = now()
         from workflows w
         where w.id = e.workflow_id and e.status = 'running' and e.heartbeat_at < clock_timestamp() - make_interval(secs => ?)
           and not (e.id = any(string_to_array(?, ',')::bigint[]))
           and w.settings->>'on_interrupt' = 'resume' and e.attempts <= ?
         returning e.id::float8 as id, e.uuid, e.workspace_id::float8 as "workspaceId", e.attempts`,
        [staleSeconds, own, MAX_RESUMES],
      ))
      const failed = await retryOnConnectionLoss(() => em.execute<{ uuid: string; attempts: number }[]>(
        `update workflow_executions set status = 'failed', error_code = 'abandoned',
           error = 'The process running this execution stopped before it finished', checkpoint = null,
           finished_at = clock_timestamp(), updated_at = now(),
           duration_ms = (extract(epoch from clock_timestamp() - coalesce(started_at, created_at)) * 1000)::int
         where status = 'running' and heartbeat_at < clock_timestamp() - make_interval(secs => ?)
           and not (id = any(string_to_array(?, ',')::bigint[]))
         returning uuid, attempts`,
        [staleSeconds, own],
      ))
      countExecutionEnds('failed', failed.length)
      // The dead process's jobs free their workspace's slots now, then the resumed ones are sent
      // (their notification finds room).
      await this.#releaseJobs([...resumed, ...failed])
      for (const row of resumed) await this.#relay({ ...row, id: Number(row.id), workspaceId: Number(row.workspaceId), attempts: Number(row.attempts) })
      await this.#resendLost(em)
      return failed.length
    } catch (error) {
      this.log.warn({ err: error }, 'workflow execution sweep failed')
      return 0
    }
  }

  /**
   * Fails the jobs still active for executions whose process died (any of the jobs their claims so
   * far could have come from), so their workspace's slots are free before the queue's own
   * supervision would notice (src/platform/queue.ts). A failure is logged: the supervision does it later.
   */
  async #releaseJobs(dead: { uuid: string; attempts: number }[]): Promise<void> {
    if (dead.length === 0) return
    const ids = dead.flatMap(({ uuid, attempts }) => Array.from({ length: Math.max(1, Number(attempts)) }, (_, claim) => handOverJobId(uuid, claim)))
    await this.jobs.release(EXECUTION_JOB, ids, 'The worker running it stopped').catch((error: unknown) => this.log.warn({ err: error }, 'dead jobs not released'))
  }

  /**
   * The outbox's relay (module comment): sends again the job of queued executions that waited
   * {@link REQUEUE_AFTER_SECONDS} (a job that ended without running them is replaced; one waiting
   * or running is left alone), and restarts their wait.
   */
  async #resendLost(em: Em): Promise<void> {
    const lost = await retryOnConnectionLoss(() =>
      em.execute<{ id: number; uuid: string; workspaceId: number; attempts: number }[]>(
        `select e.id::float8 as id, e.uuid, e.workspace_id::float8 as "workspaceId", e.attempts from workflow_executions e
         where e.status = 'queued' and e.heartbeat_at < clock_timestamp() - make_interval(secs => ?) limit 100`,
        [REQUEUE_AFTER_SECONDS],
      ),
    )
    for (const row of lost) {
      const id = handOverJobId(row.uuid, Number(row.attempts))
      await retryOnConnectionLoss(() => this.jobs.ensure(EXECUTION_JOB, { execution_id: Number(row.id) }, { id, group: String(row.workspaceId) }))
      await retryOnConnectionLoss(() =>
        queries(em)
          .updateTable('workflow_executions')
          .set((eb) => ({ heartbeat_at: eb.fn('clock_timestamp') }))
          .where('id', '=', row.id)
          .where('status', '=', 'queued')
          .execute(),
      )
    }
  }

  /**
   * Refreshes the heartbeat of the executions running here, under their claim; stops those
   * canceled meanwhile, and drops those this process no longer holds (another process resumed them
   * after this one's beats did not land): nothing they do is stored.
   */
  async #beat(): Promise<void> {
    if (!this.#active.size) return
    const ids = [...this.#claims.keys()]
    try {
      const rows = await this.orm.em.fork().execute<{ id: number; status: string }[]>(
        `update workflow_executions e set heartbeat_at = clock_timestamp()
         from unnest(string_to_array(?, ',')::bigint[], string_to_array(?, ',')::int[]) as c(id, attempts)
         where e.id = c.id and e.attempts = c.attempts and e.status in ('running', 'canceled')
         returning e.id::float8 as id, e.status`,
        [ids.join(','), ids.map((id) => this.#claims.get(id)).join(',')],
      )
      const held = new Set(rows.map((row) => Number(row.id)))
      for (const row of rows) if (row.status === 'canceled') this.abort(Number(row.id))
      for (const id of ids) {
        if (!held.has(id)) this.#active.get(id)?.abort(new ExecutionInterruptedError('Another process took the execution over'))
      }
    } catch (error) {
      this.log.warn({ err: error }, 'workflow heartbeat failed')
    }
  }

  /**
   * Claims a queued execution: only one worker wins it, and only while its workspace runs fewer
   * than `WORKFLOW_CONCURRENCY` executions (counted under a per-workspace advisory lock, so two
   * claims cannot both take the last slot). Without room it waits and tries again, holding its job.
   * Answers the claimed row (its `attempts` counted, with its checkpoint and how long it ran
   * before when it resumes), or null when the execution is no longer queued (claimed elsewhere,
   * canceled). Each try is a `transactionOnce`: a claim whose commit answer was lost is known to
   * be this worker's, not taken for one made elsewhere (which would leave the execution `running`
   * with nobody running it until the sweep failed it).
   */
  async #claim(executionId: number): Promise<Record<string, unknown> | null> {
    for (;;) {
      const outcome = await transactionOnce(this.orm, async (em) => {
        const queued = await queries(em)
          .selectFrom('workflow_executions')
          .select('workspace_id')
          .where('id', '=', executionId)
          .where('status', '=', 'queued')
          .executeTakeFirst()
        if (!queued) return { gone: true as const }
        await em.execute('select pg_advisory_xact_lock(?::int, ?::int)', [CONCURRENCY_LOCK, queued.workspace_id])
        const [claimed] = await em.execute<Record<string, unknown>[]>(
          `update workflow_executions e set status = 'running', started_at = coalesce(e.started_at, clock_timestamp()),
             heartbeat_at = clock_timestamp(), attempts = e.attempts + 1, updated_at = now()
           where e.id = ? and e.status = 'queued'
             and (select count(*) from workflow_executions r where r.workspace_id = e.workspace_id and r.status = 'running') < ?
           returning e.id::float8 as id, e.uuid, e.workflow_id::float8 as "workflowId", e.workspace_id::float8 as "workspaceId",
             e.user_id::float8 as "userId", e.mode, e.input, e.created_at as "createdAt", e.attempts, e.checkpoint,
             (extract(epoch from clock_timestamp() - e.started_at) * 1000)::float8 as "elapsedMs"`,
          [executionId, this.config.workflows.concurrency],
        )
        return { gone: false as const, claimed }
      })
      if (outcome.gone) return null
      if (outcome.claimed) return outcome.claimed
      if (this.#draining) throw new Error('This worker is shutting down')
      await sleep(CLAIM_RETRY_MS)
    }
  }

  /** Claims a queued execution (see {@link #claim}) and runs it, from its checkpoint when it resumes. */
  async #runQueued(executionId: number): Promise<void> {
    if (this.#draining) throw new Error('This worker is shutting down')
    const em = this.orm.em.fork()
    const claimed = await this.#claim(executionId)
    if (!claimed) return
    const record: ExecutionRecord = {
      id: Number(claimed.id),
      uuid: String(claimed.uuid),
      workflowId: Number(claimed.workflowId),
      workspaceId: Number(claimed.workspaceId),
      userId: Number(claimed.userId),
      mode: String(claimed.mode) as ExecutionMode,
      status: 'running',
      createdAt: toDate(claimed.createdAt as Date | string),
      attempts: Number(claimed.attempts),
    }
    // Claimed and not started: a lost connection here would leave it `running` without a
    // heartbeat until the sweep failed it as abandoned; a read may run again.
    const workflow = await retryOnConnectionLoss(() => loadRunnable(em, record.workflowId, 'and w.deleted_at is null'))
    if (!workflow) {
      const error = { code: 'not_found', message: 'The workflow was deleted', node_id: null }
      await this.#settle(record, { status: 'failed', output: null, error, nodes: [] }, 0)
      return
    }
    const checkpoint = jsonValueOf(claimed.checkpoint)
    const resumption = record.attempts > 1 ? { checkpoint: isCheckpoint(checkpoint) ? checkpoint : null, elapsedMs: Number(claimed.elapsedMs) || 0 } : undefined
    const started = this.#start(workflow, record, jsonValueOf(claimed.input), resumption)
    await started.done
  }

  /**
   * Runs a recorded execution here: tracked for heartbeats, cancels and shutdown; settled when it
   * ends (`resumption`: it resumes an interrupted one). Its workflow's `on_interrupt: resume` makes
   * it store its progress as it goes, and hand itself back to the queue if the process shuts down.
   */
  #start(workflow: RunnableWorkflow, record: ExecutionRecord, input: unknown, resumption?: Resumption, toolDepth = 0): StartedExecution {
    const controller = new AbortController()
    const began = performance.now() - (resumption?.elapsedMs ?? 0)
    this.#active.set(record.id, controller)
    this.#claims.set(record.id, record.attempts)
    let answer: (response: WebhookResponse | null) => void = () => {}
    const response = new Promise<WebhookResponse | null>((resolve) => (answer = resolve))
    const plan: ExecutionPlan = {
      execution: {
        id: record.id,
        uuid: record.uuid,
        mode: record.mode,
        workflowId: workflow.id,
        workflowUuid: workflow.uuid,
        workspaceId: workflow.workspaceId,
        userId: record.userId,
        toolDepth,
      },
      nodes: workflow.nodes,
      edges: workflow.edges,
      settings: workflow.settings,
      staticData: workflow.staticData,
      pinData: workflow.pinData,
      triggerInput: input,
      resume: resumption?.checkpoint,
    }
    const resumable = workflow.settings.on_interrupt === 'resume'
    // Checkpoints are written one after the other, each as it was when its node finished.
    let saving: Promise<void> = Promise.resolve()
    const onProgress = (checkpoint: Checkpoint) => {
      const json = storableJson(checkpoint)
      saving = saving.then(() => this.#saveProgress(record, json))
    }
    const hooks: ExecutionHooks = {
      signal: controller.signal,
      deps: { orm: this.orm, config: this.config, log: this.log },
      services: this.#services,
      respond: (value) => answer(value),
      changeStaticData: this.#changeStaticData,
      defaultTimeoutSeconds: this.config.workflows.timeoutSeconds,
      onProgress: resumable ? onProgress : undefined,
    }
    const done = executionSpan(workflow, record, () => executeGraph(plan, hooks))
      .then(async (result): Promise<ExecutionOutcome> => {
        await saving
        if (result.progress && this.#closing && resumable && record.attempts <= MAX_RESUMES && (await this.#handBack(record, result.progress))) {
          return { ...result, handedOver: true }
        }
        await this.#settle(record, result, performance.now() - began)
        return result
      })
      .finally(() => {
        this.#active.delete(record.id)
        this.#claims.delete(record.id)
        answer(null)
      })
    const tracked = done.catch((error: unknown) =>
      this.log.error({ err: error, execution: record.uuid }, 'workflow execution failed to settle'),
    )
    this.#work.add(tracked)
    void tracked.finally(() => this.#work.delete(tracked))
    return { record, done, response }
  }

  /**
   * Stores the checkpoint (JSON) of an execution running here, under its claim, again on a new
   * connection when the connection is lost (the same checkpoint twice is one); a failure is
   * logged (the previous one stays).
   */
  async #saveProgress(record: ExecutionRecord, checkpoint: string): Promise<void> {
    try {
      await retryOnConnectionLoss(() =>
        queries(this.orm.em.fork())
          .updateTable('workflow_executions')
          .set((eb) => ({ checkpoint: eb.cast(eb.val(checkpoint), 'jsonb') }))
          .where('id', '=', record.id)
          .where('attempts', '=', record.attempts)
          .where('status', '=', 'running')
          .execute(),
      )
    } catch (error) {
      this.log.warn({ err: error, execution: record.uuid }, 'execution progress not stored')
    }
  }

  /**
   * Hands an execution this process is shutting down under back to the queue: `queued` again with
   * its checkpoint, and a job for its next claim. Answers false when it was no longer this
   * process's (canceled meanwhile, or taken over): then it is settled as usual. A hand-back whose
   * answer was lost is read back (`writeOnce`: the row `queued` under this claim was handed back).
   * @throws the database's error when the connection stays lost (the sweep then takes the
   *   execution once its heartbeat is stale).
   */
  async #handBack(record: ExecutionRecord, progress: Checkpoint): Promise<boolean> {
    const checkpoint = storableJson(progress)
    const handedBack = await writeOnce(
      async () => {
        const rows = await queries(this.orm.em.fork())
          .updateTable('workflow_executions')
          .set((eb) => ({
            status: 'queued',
            checkpoint: eb.cast(eb.val(checkpoint), 'jsonb'),
            heartbeat_at: eb.fn('clock_timestamp'),
            updated_at: eb.fn('now'),
          }))
          .where('id', '=', record.id)
          .where('attempts', '=', record.attempts)
          .where('status', '=', 'running')
          .returning('id')
          .execute()
        return rows.length > 0
      },
      async () => {
        const row = await queries(this.orm.em.fork())
          .selectFrom('workflow_executions')
          .select(['status', 'attempts'])
          .where('id', '=', record.id)
          .executeTakeFirst()
        return row?.status === 'queued' && row.attempts === record.attempts ? true : undefined
      },
    )
    if (!handedBack) return false
    await this.#relay(record)
    return true
  }

  /**
   * Stores how an execution ended ({@link ExecutionStore.settle}, under its claim; `durationMs`
   * from its first start, as the processes that ran it measured it).
   */
  async #settle(record: ExecutionRecord, result: ExecutionResult, durationMs: number): Promise<void> {
    await this.store.settle(record.id, record.attempts, result, durationMs)
  }

  /**
   * A node's change of a workflow's static data, under its row lock (static-data.ts); what it
   * stored goes into the cached webhook workflows too, so the next call here starts from it.
   */
  readonly #changeStaticData: StaticDataChanger = async (workflowId, change) => {
    const changed = await changeStaticData(this.orm, this.log, workflowId, change)
    if (changed.changed) this.webhooks.staticDataStored(workflowId, changed.staticData)
    return changed
  }

  /**
   * The first step of a shutdown: jobs that reach this process from now on fail at once (pg-boss
   * retries them, on another worker), and so do those still waiting here for room in their
   * workspace (their executions are still `queued`). Executions running here go on, and schedule
   * firings still start theirs.
   */
  drain(): void {
    this.#draining = true
  }

  /** Resolves once no execution runs here, or at `deadline` (epoch milliseconds). */
  async settled(deadline: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))
    await Promise.race([Promise.all([...this.#work]), late])
    clearTimeout(timer)
  }

  /**
   * Interrupts the executions still running here and waits until each is handed back to the queue
   * (`on_interrupt: resume`, at most {@link MAX_RESUMES} times) or stored `failed` (`interrupted`).
   */
  async interrupt(): Promise<void> {
    this.#draining = true
    this.#closing = true
    for (const controller of this.#active.values()) {
      controller.abort(new ExecutionInterruptedError('The service shut down before the execution finished'))
    }
    await Promise.all([...this.#work])
  }

  /**
   * Waits up to `timeoutMs` for executions running here, interrupts the rest ({@link interrupt}),
   * then stops beating and sweeping. Jobs that arrive meanwhile fail (pg-boss retries them per
   * their policy); the runtime stops the queue afterwards.
   */
  async close(timeoutMs = 0): Promise<void> {
    this.drain()
    await this.settled(Date.now() + timeoutMs)
    await this.interrupt()
    clearInterval(this.#heartbeat)
    clearInterval(this.#sweepTimer)
  }
}

/** Whether a stored checkpoint has the shape {@link Checkpoint} (the engine wrote it; rows may be older). */
function isCheckpoint(value: unknown): value is Checkpoint {
  return isRecord(value) && Array.isArray(value.nodes) && isRecord(value.static_data)
}
