/**
 * The command room's due times (docs/api/command-room.md, "Timing guarantees"): fires each due
 * time of each task exactly once, across any number of processes. It is a source of the
 * process's one scheduler (src/platform/scheduler.ts), which decides when to look.
 *
 * - **Firing what is due** ({@link CommandRoomEngine.fireDue}, when the scheduler finds a task
 *   due): one transaction takes the active tasks whose `next_run_at` has come (`for update skip
 *   locked`, so two processes never take the same task), inserts one firing per task and due time
 *   (the unique key on both, `on conflict do nothing`, so a due time is recorded once even if a
 *   lock were lost), and moves `next_run_at` on (src/command-room/schedule.ts): due times missed
 *   while every process was down collapse into the one firing, and the schedule goes on from now.
 *   After the commit, each new firing is sent to the durable queue as a {@link FIRE_JOB} job whose
 *   id is the firing's uuid.
 * - **The fire job** claims its firing in one statement (`queued` to `running`, a conditional
 *   update: a job sent twice works once), which also links the uuids of what the firing will
 *   start (a run and its new thread, or a workflow execution, stored under them later) and reads
 *   what the task asks with its owner's acting context; it skips the firing when the task was
 *   paused or removed since (a "run now" firing fires anyway), and hands it to the
 *   {@link FiringActor} the runtime binds (the services: an agent run or a workflow execution as
 *   the task's owner), then records its outcome in one statement. Claims and outcomes are group
 *   commits: those a process makes while one statement is under way go together in the next. A
 *   failing model call is one failed firing: never retried.
 * - **The sweep** (every {@link SWEEP_MS}): a firing still `queued` after {@link LOST_SECONDS}
 *   (its job was lost between the commit and the send) is sent again; a `running` firing whose
 *   run or execution has ended takes its outcome (the process that waited for it died); one whose
 *   run or execution goes on waits for it (wherever it runs); one that started nothing within
 *   {@link ORPHAN_SECONDS} (its process died first) is fired again ({@link REFIRE_SECONDS}).
 *
 * A lost database connection (docs/operations.md, "Database deadlines") neither fails nor loses a
 * firing: the transaction of {@link CommandRoomEngine.fireDue} takes effect once
 * (`transactionOnce`, src/platform/transaction-once.ts); the claim runs again on a new connection
 * and recognises a first try that committed by the uuid it linked, which is this job's alone;
 * the outcome is written again on a new connection (a conditional update, safe twice) for up to
 * {@link RECORD_RETRY_MS}; and a firing whose database went away before it started anything goes
 * back to `queued` to be fired again. The `error` a firing stores is for its owner: a lost
 * database is a plain sentence, any other fault of ours a generic one (the real error is logged),
 * never a driver's text.
 *
 * The engine imports no service: the actor is handed to it ({@link CommandRoomEngine.bind}).
 */
import type DataLoader from 'dataloader'
import pLimit from 'p-limit'
import { uuidv7 } from 'uuidv7'
import { ACTING_COLUMNS, actingJoins } from '../access/acting-context.ts'
import type { Logger } from '../platform/logger.ts'
import type { Config } from '../platform/config.ts'
import { executePrepared, queries, retryOnConnectionLoss, type Orm } from '../platform/db.ts'
import { AppError, databaseUnavailable } from '../platform/errors.ts'
import { groupCommit } from '../platform/group-commit.ts'
import type { JobQueue } from '../platform/queue.ts'
import { transactionOnce } from '../platform/transaction-once.ts'
import { toDate } from '../platform/sql.ts'
import type { DueScheduler, DueSource } from '../platform/scheduler.ts'
import { dueAfterFiring } from './schedule.ts'

/** The fire job's name in the queue: `{firing_uuid}`, sent with the firing's uuid as its id. */
export const FIRE_JOB = 'command-room.fire'
/** Tasks one transaction of {@link CommandRoomEngine.fireDue} takes at most; it loops while batches come back full. */
const BATCH = 500
/** Milliseconds between sweeps. */
const SWEEP_MS = 10_000
/** Seconds a firing may stay `queued` before the sweep sends its job again. */
const LOST_SECONDS = 15
/**
 * Seconds a `running` firing may go without a run or an execution (none linked, or the linked
 * execution not stored) before the sweep takes it for one whose process died first.
 */
const ORPHAN_SECONDS = 120
/**
 * Seconds after a firing first fired during which one that started nothing (its process died, or
 * its database went away, first) is fired again; past them it ends `failed`. With
 * {@link ORPHAN_SECONDS} between the death and the sweep noticing it, a firing whose process keeps
 * dying is fired three times at most.
 */
const REFIRE_SECONDS = 300
/**
 * Milliseconds a firing's outcome (or its return to `queued`) is written again on a new
 * connection while the connection is lost: half of {@link ORPHAN_SECONDS}, so a process that
 * lives records it before the sweep would take the firing for one that started nothing.
 */
const RECORD_RETRY_MS = (ORPHAN_SECONDS * 1000) / 2
/** The `error` of a firing whose database was unavailable until it could no longer be fired again. */
export const DATABASE_UNAVAILABLE = 'The database was unavailable, so the task could not be fired'
/** The `error` of a firing whose process stopped before it started anything, too late to be fired again. */
export const INTERRUPTED = 'interrupted: the process firing the task stopped before it started a run or an execution'
/** The `error` of a firing that failed for a fault of ours (the real error is logged, not shown). */
export const INTERNAL_FAILURE = 'The firing failed because of an internal error'
/**
 * Fire jobs worked at once per process: {@link FETCHERS} fetchers of {@link FIRE_BATCH} each. A
 * firing mostly waits for its model, so many run at once; batches let a backlog of firings due
 * together be fetched as fast as they are worked (src/platform/queue.ts, `batchSize`).
 */
const FETCHERS = 4
const FIRE_BATCH = 10

/** A claimed firing, with what its task asks. */
export interface FiringTarget {
  firingId: number
  firingUuid: string
  taskId: number
  /** The task's owner, who the firing acts as, and the task's workspace. */
  userId: number
  workspaceId: number
  agentUuid: string | null
  workflowUuid: string | null
  /** A string for an agent, an object for a workflow. */
  input: unknown
  /** A "run now" firing rather than a scheduled one. */
  manual: boolean
  dueAt: Date
  /**
   * The uuids the claim linked, which what the firing starts must be stored under (a firing
   * whose run or execution does not exist under them started nothing): the run and its new
   * thread of an agent task, the execution of a workflow task; null for the other kind.
   */
  runUuid: string | null
  threadUuid: string | null
  executionUuid: string | null
  /** The owner's acting context as the claim read it (src/access/acting-context.ts, `ACTING_COLUMNS`). */
  owner: Record<string, unknown>
}

/**
 * How a firing ended: `pending` when what it started goes on elsewhere (an execution handed over
 * at shutdown; the sweep settles it). `deactivate`: the owner may no longer make it, or its agent
 * or workflow is gone: the task stops.
 */
export type FiringOutcome = { status: 'succeeded' } | { status: 'failed'; error: string; deactivate?: boolean } | { status: 'pending' }

/**
 * Acts out a claimed firing (src/command-room/command-room-firing.ts), storing what it starts
 * under the target's linked uuids. A firing throws what it cannot tell as an outcome: a lost
 * database connection (fired again when it started nothing), a fault of ours (`failed`, with a
 * generic message); an AppError's message is shown as it is.
 */
export interface FiringActor {
  fire(target: FiringTarget): Promise<FiringOutcome>
}

const UNBOUND: FiringActor = { fire: () => Promise.reject(new Error('The command room is not bound to the app')) }

/**
 * The claims of {@link CommandRoomEngine.fire}, for a batch of firings (parameters: their uuids,
 * the uuids each links as its run's or execution's, the uuids of their new threads, each list
 * comma-separated in the same order), one text for every batch, so it runs prepared. A `queued`
 * firing becomes `running`; a `running` one that links the uuid this claim brings is this claim's
 * own, committed by a first try whose answer was lost, and is answered again. An agent task links
 * a run and its thread, a workflow task an execution; a task with neither (its agent or workflow
 * gone) links the uuid as a run's, which is never stored. The tasks' `last_run_at` is touched in
 * the same statement, their rows locked in id order (two batches never wait for each other in a
 * circle).
 */
const CLAIM_SQL = `with v as (
     select * from unnest(string_to_array(?, ',')::uuid[], string_to_array(?, ',')::uuid[], string_to_array(?, ',')::uuid[])
       as v(firing_uuid, linked, thread)),
   claimed as (
     update command_room_task_firings f set status = 'running', fired_at = coalesce(f.fired_at, now()), updated_at = now(),
       run_uuid = case when t.workflow_id is null then v.linked end,
       thread_uuid = case when t.workflow_id is null and t.agent_id is not null then v.thread end,
       execution_uuid = case when t.workflow_id is not null then v.linked end
     from v, command_room_tasks t
     where f.uuid = v.firing_uuid and t.id = f.task_id
       and (f.status = 'queued' or (f.status = 'running' and v.linked in (f.run_uuid, f.execution_uuid)))
     returning f.id, f.uuid, f.task_id, f.manual, f.due_at, f.run_uuid, f.thread_uuid, f.execution_uuid),
   touched as (
     update command_room_tasks t set last_run_at = now()
     from (select id from command_room_tasks where id in (select task_id from claimed) order by id for update) l where t.id = l.id)
   select c.id::float8 as "firingId", c.uuid as "firingUuid", c.task_id::float8 as "taskId", c.manual, c.due_at as "dueAt",
     c.run_uuid as "runUuid", c.thread_uuid as "threadUuid", c.execution_uuid as "executionUuid",
     t.user_id::float8 as "userId", t.workspace_id::float8 as "workspaceId", t.input::text as input, t.is_active as "isActive",
     t.deleted_at as "deletedAt", a.uuid as "agentUuid", w.uuid as "workflowUuid", ${ACTING_COLUMNS}
   from claimed c join command_room_tasks t on t.id = c.task_id
   left join agents a on a.id = t.agent_id left join workflows w on w.id = t.workflow_id
   ${actingJoins('t.user_id', 't.workspace_id')}`

/**
 * The outcomes of {@link CommandRoomEngine.fire}, for a batch of firings (parameter: a JSON array
 * of `{id, status, error, deactivate}`), one text for every batch, so it runs prepared: each
 * firing ends once (only while `running`), its links kept only where what they name exists, and
 * its task takes the status as its `last_status` (and stops when deactivated; of two firings of
 * one task in a batch, a deactivating one's status wins), the tasks' rows locked in id order.
 */
const SETTLE_SQL = `with v as (select * from jsonb_to_recordset(?::jsonb) as v(id bigint, status text, error text, deactivate boolean)),
   ended as (
     update command_room_task_firings f set status = v.status, error = v.error,
       run_uuid = (select r.uuid from runs r where r.uuid = f.run_uuid),
       thread_uuid = (select th.uuid from threads th where th.uuid = f.thread_uuid),
       execution_uuid = (select e.uuid from workflow_executions e where e.uuid = f.execution_uuid),
       updated_at = now()
     from v where f.id = v.id and f.status = 'running'
     returning f.task_id, v.status, v.deactivate),
   per_task as (
     select task_id, bool_or(deactivate) as deactivate, (array_agg(status order by deactivate desc))[1] as status from ended group by task_id)
   update command_room_tasks t set last_status = p.status, updated_at = now(),
     is_active = case when p.deactivate then false else t.is_active end,
     next_run_at = case when p.deactivate then null else t.next_run_at end
   from per_task p, (select id from command_room_tasks where id in (select task_id from per_task) order by id for update) l
   where t.id = p.task_id and l.id = t.id`

/** Claims and outcomes per statement at most (their group commits, src/platform/group-commit.ts). */
const CLAIM_BATCH = 50
const SETTLE_BATCH = 100

/** A claimed firing, with what its task asks and whether it was removed or paused since. */
type Claimed = FiringTarget & { deleted: boolean; active: boolean }

/** An outcome to record ({@link CommandRoomEngine.fire}). */
interface Outcome {
  firingId: number
  status: 'succeeded' | 'failed' | 'skipped'
  error?: string
  deactivate?: boolean
}

/** See the module comment. */
export class CommandRoomEngine implements DueSource {
  readonly name = 'command-room'
  #actor: FiringActor = UNBOUND
  #sweep: NodeJS.Timeout | undefined
  /** Sweeps one at a time (`p-limit`): a call while one is under way runs after it, and the timer skips its turn. */
  readonly #sweeps = pLimit(1)
  #started = false
  #closed = false
  /**
   * Claims and outcomes of the firings this process works go to the database in group commits
   * (src/platform/group-commit.ts): those that come while one statement is under way go together
   * in the next, one round trip and one commit for the batch (a fetch of fire jobs claims its
   * batch at once).
   */
  readonly #claims: DataLoader<string, Claimed | null>
  readonly #outcomes: DataLoader<Outcome, void>

  private constructor(
    private readonly orm: Orm,
    private readonly log: Logger,
    private readonly jobs: JobQueue,
    private readonly scheduler: DueScheduler,
  ) {
    this.#claims = groupCommit(CLAIM_BATCH, (uuids) => this.#claimMany(uuids))
    this.#outcomes = groupCommit(SETTLE_BATCH, async (outcomes) => {
      const json = JSON.stringify(
        outcomes.map((o) => ({ id: o.firingId, status: o.status, error: o.error ?? null, deactivate: o.deactivate === true })),
      )
      await retryOnConnectionLoss(() => executePrepared(this.orm, () => this.orm.em.fork(), 'command_room_settle', SETTLE_SQL, [json]), RECORD_RETRY_MS)
      return outcomes.map(() => undefined)
    })
  }

  /**
   * Registers {@link FIRE_JOB} with `jobs` (never retried) and the tasks' due times with
   * `scheduler`.
   * @throws Error when `jobs` has started or holds the job already.
   */
  static create(o: { orm: Orm; config: Config; log: Logger; jobs: JobQueue; scheduler: DueScheduler }): CommandRoomEngine {
    const engine = new CommandRoomEngine(o.orm, o.log, o.jobs, o.scheduler)
    o.jobs.register<{ firing_uuid: string }>(FIRE_JOB, ({ firing_uuid }) => engine.fire(firing_uuid), {
      retryLimit: 0,
      // A firing may wait for its run for hours (approvals); the job of one whose worker died
      // fails within seconds, so that its firing can be sent again (a job id that exists and has
      // not ended queues nothing).
      expireInSeconds: 86_400,
      heartbeatSeconds: 10,
      localConcurrency: FETCHERS,
      batchSize: FIRE_BATCH,
    })
    o.scheduler.register(engine)
    return engine
  }

  /** Gives the engine the actor that runs firings; until then firings fail. */
  bind(actor: FiringActor): void {
    this.#actor = actor
  }

  /** Starts the sweep in this process (one that works the queue). Later calls do nothing. */
  start(): void {
    if (this.#started || this.#closed) return
    this.#started = true
    this.#sweep = setInterval(() => {
      if (this.#sweeps.activeCount === 0) void this.sweep().catch((error: unknown) => this.log.warn({ err: error }, 'command room sweep failed'))
    }, SWEEP_MS)
    this.#sweep.unref()
  }

  /**
   * Tells the scheduler that a task of this process is now due at `at` (stored, updated or
   * resumed here), so it fires then rather than at its next look (src/platform/scheduler.ts).
   */
  wake(at: Date | null): void {
    this.scheduler.wake(at)
  }

  /** The earliest `next_run_at` of the active tasks; null when none is scheduled. */
  async earliestDue(): Promise<Date | null> {
    // An aggregate is not converted: the drivers answer it as text.
    const row = await queries(this.orm.em.fork())
      .selectFrom('command_room_tasks')
      .select((eb) => eb.fn.min<Date | string | null>('next_run_at').as('at'))
      .where('is_active', '=', true)
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
    return row?.at ? toDate(row.at) : null
  }

  /** Stops the sweep. */
  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#sweep)
  }

  /**
   * Fires every task due at `now` (default: this process's clock): records the firings and sends
   * their jobs (a send that fails is tried again in the background, then left to the sweep).
   * Answers how many firings it recorded.
   * @throws the database's error when it stays unreachable (the scheduler looks again later).
   */
  async fireDue(now: Date = new Date()): Promise<number> {
    let recorded = 0
    for (;;) {
      const { firings, full } = await this.#takeDue(now)
      recorded += firings.length
      // One insert into the queue for the batch: sent one by one, a thousand firings due at once
      // waited tens of seconds for their turn on the queue's connections. A failed send is tried
      // again in the background (the next due times do not wait for it), then left to the sweep.
      const send = () => this.jobs.sendMany(FIRE_JOB, firings.map((uuid) => ({ data: { firing_uuid: uuid }, id: uuid })))
      await send().catch((error: unknown) => {
        this.log.info({ err: error, firings: firings.length }, 'firings not sent; sending them again')
        void retryOnConnectionLoss(send).catch((failure: unknown) =>
          this.log.warn({ err: failure, firings: firings.length }, 'firings not sent; the sweep will send them'),
        )
      })
      if (!full) return recorded
    }
  }

  /**
   * One batch of {@link fireDue}, in one transaction that takes effect once (`transactionOnce`: a
   * lost commit answer still answers the firings it recorded, to be sent now): the uuids of the
   * firings it recorded.
   */
  async #takeDue(now: Date): Promise<{ firings: string[]; full: boolean }> {
    const em = this.orm.em.fork()
    const dueTasks = (db: ReturnType<typeof queries>) =>
      db.selectFrom('command_room_tasks').where('is_active', '=', true).where('deleted_at', 'is', null).where('next_run_at', '<=', now)
    // Cheap when nothing is due, which is almost always: no transaction, one index probe.
    const any = await dueTasks(queries(em))
      .select((eb) => eb.lit(1).as('due'))
      .limit(1)
      .executeTakeFirst()
    if (!any) return { firings: [], full: false }
    return transactionOnce(this.orm, async (tx) => {
      const db = queries(tx)
      const due = await dueTasks(db)
        .select(['id', 'schedule', 'timezone', 'run_at', 'next_run_at'])
        .$narrowType<{ next_run_at: Date }>()
        .orderBy('next_run_at')
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute()
      if (!due.length) return { firings: [], full: false }
      const plans = due.map((task) => {
        const dueAt = task.next_run_at
        let next: Date | null
        try {
          next = dueAfterFiring({ schedule: task.schedule, timezone: task.timezone, runAt: task.run_at }, dueAt, now)
        } catch (error) {
          // Stored schedules were checked when stored; one that no longer computes stops here.
          this.log.error({ err: error, task: task.id }, 'command room task schedule does not compute; the task stops after this firing')
          next = null
        }
        return { id: task.id, dueAt, next }
      })
      const inserted = await db
        .insertInto('command_room_task_firings')
        .values((eb) =>
          plans.map((plan) => ({
            uuid: eb.fn('gen_random_uuid'),
            task_id: plan.id,
            due_at: plan.dueAt,
            status: 'queued',
            manual: false,
            created_at: eb.fn('now'),
            updated_at: eb.fn('now'),
          })),
        )
        .onConflict((oc) => oc.columns(['task_id', 'due_at']).doNothing())
        .returning(['uuid', 'task_id'])
        .execute()
      const counted = new Set(inserted.map((row) => row.task_id))
      await tx.execute(
        `update command_room_tasks t set next_run_at = v.next_run_at, firings_count = t.firings_count + v.added, updated_at = now()
         from (values ${plans.map(() => '(?::bigint, ?::timestamptz, ?::int)').join(', ')}) as v(id, next_run_at, added)
         where t.id = v.id`,
        plans.flatMap((plan) => [plan.id, plan.next, counted.has(plan.id) ? 1 : 0]),
      )
      return { firings: inserted.map((row) => row.uuid), full: due.length === BATCH }
    })
  }

  /**
   * Sends the fire job of firing `uuid` unless one is waiting or running (the job id is the
   * firing's uuid).
   * @throws when the queue cannot be reached (the sweep sends it later).
   */
  async send(uuid: string): Promise<void> {
    await this.jobs.ensure(FIRE_JOB, { firing_uuid: uuid }, { id: uuid })
  }

  /**
   * The fire job (module comment): claims firing `uuid`, acts it out and records its outcome.
   * Never throws for the firing's own faults (they are its outcome) nor for a lost database
   * connection (the firing goes back to `queued`, or waits for what it started; logged).
   * @throws the database's error when the claim cannot be made (the firing stays `queued`, or is
   *   claimed and started nothing: either way the sweep fires it again).
   */
  async fire(uuid: string): Promise<void> {
    const target = await this.#claim(uuid)
    // Claimed already (a job sent twice), or the task and its firings are gone.
    if (!target) return
    if (target.deleted) return this.#settle(target, { status: 'skipped', error: 'The task was removed before it fired' })
    if (!target.active && !target.manual) return this.#settle(target, { status: 'skipped', error: 'The task was paused before it fired' })
    let outcome: FiringOutcome
    try {
      outcome = await this.#actor.fire(target)
    } catch (error) {
      if (databaseUnavailable(error)) return this.#lostDatabase(target, error)
      outcome = { status: 'failed', error: this.#failureMessage(error, target) }
    }
    // What it started goes on elsewhere, linked since the claim: the sweep takes its outcome.
    if (outcome.status === 'pending') return
    await this.#settle(target, outcome.status === 'failed' ? outcome : { status: 'succeeded' })
  }

  /**
   * Claims firing `uuid` (`queued` to `running`; `fired_at` keeps the first claim's time), links
   * the uuids of what it will start (new ones each claim, so a firing fired again starts anew)
   * and touches its task's `last_run_at`, in one statement (with the claims of the other firings
   * this process claims meanwhile) that also reads what the task asks and its owner's acting
   * context. Answers the claimed firing, or undefined when it was not `queued` (claimed already,
   * or gone).
   */
  async #claim(uuid: string): Promise<Claimed | undefined> {
    return (await this.#claims.load(uuid)) ?? undefined
  }

  /**
   * The claims of `uuids` ({@link CLAIM_SQL}). A lost connection runs the statement again on a
   * new one: a first try that committed is recognised by the uuids it linked, which only this
   * call knows, so each claim is this job's once, never mistaken for one made before (a job sent
   * twice: its claim links other uuids).
   */
  async #claimMany(uuids: readonly string[]): Promise<(Claimed | null)[]> {
    const linked = uuids.map(() => uuidv7())
    const threads = uuids.map(() => uuidv7())
    const params = [uuids.join(','), linked.join(','), threads.join(',')]
    const rows = await retryOnConnectionLoss(() => executePrepared(this.orm, () => this.orm.em.fork(), 'command_room_claim', CLAIM_SQL, params))
    // By the uuid each claim linked: of a firing named twice in a batch (its job sent twice), one claim wins.
    const byLinked = new Map(rows.map((row) => [String(row.runUuid ?? row.executionUuid), row]))
    return linked.map((uuid) => {
      const row = byLinked.get(uuid)
      if (!row) return null
      return {
        firingId: Number(row.firingId),
        firingUuid: String(row.firingUuid),
        taskId: Number(row.taskId),
        userId: Number(row.userId),
        workspaceId: Number(row.workspaceId),
        agentUuid: row.agentUuid == null ? null : String(row.agentUuid),
        workflowUuid: row.workflowUuid == null ? null : String(row.workflowUuid),
        input: JSON.parse(String(row.input)) as unknown,
        manual: Boolean(row.manual),
        dueAt: toDate(row.dueAt as Date | string),
        runUuid: row.runUuid == null ? null : String(row.runUuid),
        threadUuid: row.threadUuid == null ? null : String(row.threadUuid),
        executionUuid: row.executionUuid == null ? null : String(row.executionUuid),
        owner: row,
        deleted: row.deletedAt != null,
        active: Boolean(row.isActive),
      }
    })
  }

  /**
   * What a firing's error says for `error` (module comment): an AppError's own message (the
   * services word them for the caller), else a generic sentence, the error itself logged.
   */
  #failureMessage(error: unknown, target: FiringTarget): string {
    if (error instanceof AppError) return error.message
    this.log.error({ err: error, firing: target.firingUuid }, 'command room firing failed unexpectedly')
    return INTERNAL_FAILURE
  }

  /**
   * A firing whose database connection was lost for good while it fired: what it started (a run)
   * goes on and the sweep takes its outcome; when it started nothing it is fired again
   * ({@link #refire}).
   */
  async #lostDatabase(target: FiringTarget, error: unknown): Promise<void> {
    this.log.warn({ err: error, firing: target.firingUuid }, 'command room firing lost its database connection')
    // Its row names whatever it may have started since the claim; #refire fires it again only when none exists.
    try {
      await retryOnConnectionLoss(() => this.#refire([target.firingId], DATABASE_UNAVAILABLE), RECORD_RETRY_MS)
    } catch (failure) {
      this.log.error({ err: failure, firing: target.firingUuid }, 'command room firing not sent back; the sweep will fire it again')
    }
  }

  /**
   * Ends a `running` firing (once: a firing already ended is left alone), in one statement with
   * the outcomes of the other firings this process ends meanwhile ({@link SETTLE_SQL}): its links
   * kept only where a run, thread or execution exists under them (what it started nothing of is
   * unlinked), and its status as the task's `last_status`; `deactivate` stops the task. Written
   * again on a new connection while the connection is lost (for up to {@link RECORD_RETRY_MS}); a
   * failure is logged (the sweep settles a firing whose run or execution is linked, and fires
   * again one that started nothing).
   */
  async #settle(
    target: Pick<FiringTarget, 'firingId' | 'firingUuid'>,
    o: { status: 'succeeded' | 'failed' | 'skipped'; error?: string; deactivate?: boolean },
  ): Promise<void> {
    try {
      await this.#outcomes.load({ firingId: target.firingId, ...o })
    } catch (error) {
      this.log.error({ err: error, firing: target.firingUuid }, 'command room firing outcome not stored; the sweep will settle it')
    }
  }

  /**
   * Sends back to `queued` the `running` firings among `firingIds` that started nothing (no run
   * and no execution stored under the uuids they link) and first fired less than {@link REFIRE_SECONDS} ago, and ends the
   * older ones `failed` with `error` (their task's `last_status` too); one statement, safe twice.
   * Answers the uuids of those sent back, whose job the caller sends (when it is not that job).
   */
  async #refire(firingIds: number[], error: string): Promise<{ queued: string[]; failed: number }> {
    if (firingIds.length === 0) return { queued: [], failed: 0 }
    const rows = await this.orm.em.fork().execute<{ uuid: string; status: string }[]>(
      `with again as (
         update command_room_task_firings f set
           status = case when coalesce(f.fired_at, f.created_at) > now() - make_interval(secs => ?) then 'queued' else 'failed' end,
           error = case when coalesce(f.fired_at, f.created_at) > now() - make_interval(secs => ?) then null else ? end,
           run_uuid = null, thread_uuid = null, execution_uuid = null, updated_at = now()
         where f.id = any(string_to_array(?, ',')::bigint[]) and f.status = 'running'
           and not exists (select 1 from runs r where r.uuid = f.run_uuid)
           and not exists (select 1 from workflow_executions e where e.uuid = f.execution_uuid)
         returning f.uuid, f.task_id, f.status),
       told as (
         update command_room_tasks t set last_status = 'failed', updated_at = now()
         from again a where t.id = a.task_id and a.status = 'failed' returning t.id)
       select uuid, status from again`,
      [REFIRE_SECONDS, REFIRE_SECONDS, error, firingIds.join(',')],
    )
    return { queued: rows.filter((row) => row.status === 'queued').map((row) => String(row.uuid)), failed: rows.filter((row) => row.status === 'failed').length }
  }

  /**
   * The sweep (module comment). Answers how many firings it sent (again), how many it settled,
   * and how many of those it sent were fired again after starting nothing. A call while a sweep is
   * under way runs after it.
   */
  sweep(): Promise<{ sent: number; settled: number; refired: number }> {
    return this.#sweeps(() => this.#sweepOnce())
  }

  /**
   * One {@link sweep}. Each statement runs again on a new connection when its connection is lost:
   * run twice, each finds only what the first left (a firing sent again has a new `updated_at`, a
   * settled or refired one is no longer `running`), and what a lost answer hid is found by a later
   * sweep. A job that could not be sent is logged: the next sweep sends it.
   */
  async #sweepOnce(): Promise<{ sent: number; settled: number; refired: number }> {
    const em = this.orm.em.fork()
    const lost = await retryOnConnectionLoss(() =>
      em.execute<{ uuid: string }[]>(
        `update command_room_task_firings set updated_at = now()
         where id in (select id from command_room_task_firings where status = 'queued' and updated_at < now() - make_interval(secs => ?)
                      order by updated_at limit 500 for update skip locked)
         returning uuid`,
        [LOST_SECONDS],
      ),
    )
    for (const { uuid } of lost) await this.#resend(uuid)
    // Running firings whose run or execution has ended: the outcome is theirs. A run's error is
    // `{code, message}` (jsonb), an execution's its message (text).
    const ended = await retryOnConnectionLoss(() =>
      em.execute<{ id: number; uuid: string; taskId: number; status: string; error: string | null }[]>(
        `select f.id::float8 as id, f.uuid, f.task_id::float8 as "taskId", coalesce(r.status, e.status) as status,
           coalesce(r.error->>'message', e.error) as error
         from command_room_task_firings f
         left join runs r on r.uuid = f.run_uuid left join workflow_executions e on e.uuid = f.execution_uuid
         where f.status = 'running' and f.updated_at < now() - interval '5 seconds'
           and coalesce(r.status, e.status) in ('succeeded', 'failed', 'canceled')
         limit 500`,
      ),
    )
    for (const firing of ended) {
      const succeeded = firing.status === 'succeeded'
      const target = { firingId: Number(firing.id), firingUuid: String(firing.uuid) }
      await this.#settle(target, succeeded ? { status: 'succeeded' } : { status: 'failed', error: firing.error ?? `The ${firing.status === 'canceled' ? 'run was canceled' : 'firing failed'}` })
    }
    // Running firings that started nothing (no run or execution stored under their links) long after their
    // claim: their process died first. A run or execution that goes on elsewhere is waited for.
    const orphans = await retryOnConnectionLoss(() =>
      em.execute<{ id: number }[]>(
        `select f.id::float8 as id from command_room_task_firings f
         where f.status = 'running' and f.updated_at < now() - make_interval(secs => ?)
           and not exists (select 1 from runs r where r.uuid = f.run_uuid)
           and not exists (select 1 from workflow_executions e where e.uuid = f.execution_uuid)
         limit 500`,
        [ORPHAN_SECONDS],
      ),
    )
    const again = await retryOnConnectionLoss(() =>
      this.#refire(
        orphans.map((row) => Number(row.id)),
        INTERRUPTED,
      ),
    )
    for (const uuid of again.queued) await this.#resend(uuid)
    return { sent: lost.length + again.queued.length, settled: ended.length + again.failed, refired: again.queued.length }
  }

  /** {@link send} for the sweep, again on a new connection when the connection is lost; a failure is logged. */
  async #resend(uuid: string): Promise<void> {
    await retryOnConnectionLoss(() => this.send(uuid)).catch((error: unknown) =>
      this.log.warn({ err: error, firing: uuid }, 'firing not sent; the next sweep sends it'),
    )
  }
}
