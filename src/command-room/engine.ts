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
 * - **The fire job** claims its firing (`queued` to `running`, a conditional update: a job sent
 *   twice works once), skips it when the task was paused or removed since (a "run now" firing
 *   fires anyway), and hands it to the {@link FiringActor} the runtime binds (the services: an
 *   agent run or a workflow execution as the task's owner), recording what that made as soon as it
 *   exists, then its outcome. Never retried: a failing model call is one failed firing.
 * - **The sweep** (every {@link SWEEP_MS}): a firing still `queued` after {@link LOST_SECONDS}
 *   (its job was lost between the commit and the send) is sent again; a `running` firing whose
 *   run or execution has ended takes its outcome (the process that waited for it died); one that
 *   never linked a run or execution within {@link ORPHAN_SECONDS} ends `failed` (`interrupted`).
 *
 * The engine imports no service: the actor is handed to it ({@link CommandRoomEngine.bind}).
 */
import type { Logger } from '../platform/logger.ts'
import type { Config } from '../platform/config.ts'
import { queries, type Em, type Orm } from '../platform/db.ts'
import type { JobQueue } from '../platform/queue.ts'
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
/** Seconds a `running` firing may go without a linked run or execution before the sweep fails it. */
const ORPHAN_SECONDS = 120
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
}

/** What a firing made, recorded as soon as it exists. */
export interface FiringLinks {
  runUuid?: string
  threadUuid?: string | null
  executionUuid?: string
}

/**
 * How a firing ended: `pending` when what it started goes on elsewhere (an execution handed over
 * at shutdown; the sweep settles it). `deactivate`: the owner may no longer make it, or its agent
 * or workflow is gone: the task stops.
 */
export type FiringOutcome = { status: 'succeeded' } | { status: 'failed'; error: string; deactivate?: boolean } | { status: 'pending' }

/** Acts out a claimed firing (src/command-room/command-room-firing.ts). */
export interface FiringActor {
  fire(target: FiringTarget, link: (links: FiringLinks) => Promise<void>): Promise<FiringOutcome>
}

const UNBOUND: FiringActor = { fire: () => Promise.reject(new Error('The command room is not bound to the app')) }

/** See the module comment. */
export class CommandRoomEngine implements DueSource {
  readonly name = 'command-room'
  #actor: FiringActor = UNBOUND
  #sweep: NodeJS.Timeout | undefined
  #started = false
  #closed = false

  private constructor(
    private readonly orm: Orm,
    private readonly log: Logger,
    private readonly jobs: JobQueue,
    private readonly scheduler: DueScheduler,
  ) {}

  /**
   * Registers {@link FIRE_JOB} with `jobs` (never retried) and the tasks' due times with
   * `scheduler`.
   * @throws Error when `jobs` has started or holds the job already.
   */
  static create(o: { orm: Orm; config: Config; log: Logger; jobs: JobQueue; scheduler: DueScheduler }): CommandRoomEngine {
    const engine = new CommandRoomEngine(o.orm, o.log, o.jobs, o.scheduler)
    o.jobs.register<{ firing_uuid: string }>(FIRE_JOB, ({ firing_uuid }) => engine.fire(firing_uuid), {
      retryLimit: 0,
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
    this.#sweep = setInterval(() => void this.sweep().catch((error: unknown) => this.log.warn({ err: error }, 'command room sweep failed')), SWEEP_MS)
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
   * their jobs. Answers how many firings it recorded.
   */
  async fireDue(now: Date = new Date()): Promise<number> {
    let recorded = 0
    for (;;) {
      const { firings, full } = await this.#takeDue(now)
      recorded += firings.length
      // One insert into the queue for the batch: sent one by one, a thousand firings due at once
      // waited tens of seconds for their turn on the queue's connections.
      await this.jobs
        .sendMany(FIRE_JOB, firings.map((uuid) => ({ data: { firing_uuid: uuid }, id: uuid })))
        .catch((error: unknown) => this.log.warn({ err: error, firings: firings.length }, 'firings not sent; the sweep will send them'))
      if (!full) return recorded
    }
  }

  /** One batch of {@link fireDue}, in one transaction: the uuids of the firings it recorded. */
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
    return em.transactional(async (tx) => {
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

  /** The fire job (module comment). Never throws for the firing's own faults: they are its outcome. */
  async fire(uuid: string): Promise<void> {
    const em = this.orm.em.fork()
    const [row] = await em.execute<Record<string, unknown>[]>(
      `with claimed as (
         update command_room_task_firings set status = 'running', fired_at = now(), updated_at = now()
         where uuid = ? and status = 'queued' returning id, uuid, task_id, manual, due_at),
       touched as (update command_room_tasks set last_run_at = now() where id = (select task_id from claimed))
       select c.id::float8 as "firingId", c.uuid as "firingUuid", c.task_id::float8 as "taskId", c.manual, c.due_at as "dueAt",
         t.user_id::float8 as "userId", t.workspace_id::float8 as "workspaceId", t.input::text as input, t.is_active as "isActive",
         t.deleted_at as "deletedAt", a.uuid as "agentUuid", w.uuid as "workflowUuid"
       from claimed c join command_room_tasks t on t.id = c.task_id
       left join agents a on a.id = t.agent_id left join workflows w on w.id = t.workflow_id`,
      [uuid],
    )
    // Claimed already (a job sent twice), or the task and its firings are gone.
    if (!row) return
    const target: FiringTarget = {
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
    }
    if (row.deletedAt) return this.#settle(em, target.firingId, target.taskId, { status: 'skipped', error: 'The task was removed before it fired' })
    if (!row.isActive && !target.manual) return this.#settle(em, target.firingId, target.taskId, { status: 'skipped', error: 'The task was paused before it fired' })
    let outcome: FiringOutcome
    try {
      outcome = await this.#actor.fire(target, (links) => this.#link(em, target.firingId, links))
    } catch (error) {
      this.log.warn({ err: error, firing: uuid }, 'command room firing failed')
      outcome = { status: 'failed', error: error instanceof Error ? error.message : 'The firing failed' }
    }
    if (outcome.status === 'pending') return
    await this.#settle(em, target.firingId, target.taskId, outcome.status === 'failed' ? outcome : { status: 'succeeded' })
  }

  async #link(em: Em, firingId: number, links: FiringLinks): Promise<void> {
    await queries(em)
      .updateTable('command_room_task_firings')
      .set((eb) => ({
        run_uuid: eb.fn.coalesce(eb.val(links.runUuid ?? null), 'run_uuid'),
        thread_uuid: eb.fn.coalesce(eb.val(links.threadUuid ?? null), 'thread_uuid'),
        execution_uuid: eb.fn.coalesce(eb.val(links.executionUuid ?? null), 'execution_uuid'),
        updated_at: eb.fn('now'),
      }))
      .where('id', '=', firingId)
      .execute()
  }

  /**
   * Ends a `running` firing (once: a firing already ended is left alone) and records its status
   * as the task's `last_status`; `deactivate` stops the task.
   */
  async #settle(em: Em, firingId: number, taskId: number, o: { status: 'succeeded' | 'failed' | 'skipped'; error?: string; deactivate?: boolean }): Promise<void> {
    await em.transactional(async (tx) => {
      const db = queries(tx)
      const ended = await db
        .updateTable('command_room_task_firings')
        .set((eb) => ({ status: o.status, error: o.error ?? null, updated_at: eb.fn('now') }))
        .where('id', '=', firingId)
        .where('status', '=', 'running')
        .returning('id')
        .execute()
      if (!ended.length) return
      await db
        .updateTable('command_room_tasks')
        .set((eb) => ({
          last_status: o.status,
          updated_at: eb.fn('now'),
          ...(o.deactivate ? { is_active: false, next_run_at: null } : {}),
        }))
        .where('id', '=', taskId)
        .execute()
    })
  }

  /** The sweep (module comment). Answers how many firings it sent again and how many it settled. */
  async sweep(): Promise<{ sent: number; settled: number }> {
    const em = this.orm.em.fork()
    const lost = await em.execute<{ uuid: string }[]>(
      `update command_room_task_firings set updated_at = now()
       where id in (select id from command_room_task_firings where status = 'queued' and updated_at < now() - make_interval(secs => ?)
                    order by updated_at limit 500 for update skip locked)
       returning uuid`,
      [LOST_SECONDS],
    )
    for (const { uuid } of lost) await this.send(uuid)
    // Running firings whose run or execution has ended: the outcome is theirs. A run's error is
    // `{code, message}` (jsonb), an execution's its message (text).
    const ended = await em.execute<{ id: number; taskId: number; status: string; error: string | null }[]>(
      `select f.id::float8 as id, f.task_id::float8 as "taskId", coalesce(r.status, e.status) as status,
         coalesce(r.error->>'message', e.error) as error
       from command_room_task_firings f
       left join runs r on r.uuid = f.run_uuid left join workflow_executions e on e.uuid = f.execution_uuid
       where f.status = 'running' and f.updated_at < now() - interval '5 seconds'
         and coalesce(r.status, e.status) in ('succeeded', 'failed', 'canceled')
       limit 500`,
    )
    for (const firing of ended) {
      const succeeded = firing.status === 'succeeded'
      await this.#settle(em, Number(firing.id), Number(firing.taskId), succeeded ? { status: 'succeeded' } : { status: 'failed', error: firing.error ?? `The ${firing.status === 'canceled' ? 'run was canceled' : 'firing failed'}` })
    }
    const orphans = await em.execute<{ id: number; taskId: number }[]>(
      `select id::float8 as id, task_id::float8 as "taskId" from command_room_task_firings
       where status = 'running' and run_uuid is null and execution_uuid is null and updated_at < now() - make_interval(secs => ?) limit 500`,
      [ORPHAN_SECONDS],
    )
    for (const firing of orphans) {
      await this.#settle(em, Number(firing.id), Number(firing.taskId), { status: 'failed', error: 'interrupted: the process firing the task stopped before it started a run or an execution' })
    }
    return { sent: lost.length, settled: ended.length + orphans.length }
  }
}
