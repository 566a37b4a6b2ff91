/**
 * Workflow schedule triggers as a source of the process's one scheduler (src/platform/scheduler.ts;
 * docs/api/workflows.md, "Schedules"; docs/operations.md, "Scheduling").
 *
 * - **Due times** live in `workflow_schedules`, one row per active workflow whose trigger is a
 *   `schedule_trigger`: {@link WorkflowSchedules.sync} writes it after every save (keeping the due
 *   time when the cron and zone did not change) or removes it; {@link WorkflowSchedules.reconcile}
 *   fills the rows at start for workflows saved before this table existed.
 * - **Firing** ({@link WorkflowSchedules.fireDue}): one transaction takes the due rows (`for update
 *   skip locked`), records one `queued` execution per workflow and due time (mode `schedule`,
 *   input `{scheduled_at}` = the due time, never the firing time; the unique key on workflow and
 *   `due_at` makes a due time one execution even if a lock were lost) and moves each row to its
 *   next due time. Due times missed while every process was down collapse into one execution,
 *   and the schedule goes on from now. After the commit the executions go to the durable queue
 *   like any background execution (the engine's sweep sends again one whose send was lost). The
 *   transaction takes effect once though its connection is lost (`transactionOnce`,
 *   src/platform/transaction-once.ts): a lost commit answer does not leave its executions for the
 *   sweep to find 15 s later.
 */
import { uuidv7 } from 'uuidv7'
import type { Logger } from '../platform/logger.ts'
import { queries, type Orm } from '../platform/db.ts'
import { transactionOnce } from '../platform/transaction-once.ts'
import { cronAfter } from '../platform/cron.ts'
import type { DueScheduler, DueSource } from '../platform/scheduler.ts'
import { toDate } from '../platform/sql.ts'
import { jsonValueOf } from '../access/wire.ts'
import { triggerOf } from './node-types.ts'

/** Schedules one transaction takes at most; {@link WorkflowSchedules.fireDue} loops while batches come back full. */
const BATCH = 500

/** A scheduled execution recorded and not yet sent to the queue. */
export interface ScheduledExecution {
  id: number
  uuid: string
  workspaceId: number
}

/** The cron and zone of a workflow's schedule trigger, or null when it has none. */
function scheduleOf(nodes: unknown): { cron: string; timezone: string } | null {
  const parsed = jsonValueOf(nodes)
  const trigger = triggerOf(Array.isArray(parsed) ? parsed : [])
  const params = trigger?.type === 'schedule_trigger' ? trigger.parameters : undefined
  if (!params || typeof params.cron !== 'string') return null
  return { cron: params.cron, timezone: typeof params.timezone === 'string' ? params.timezone : 'UTC' }
}

/** See the module comment. */
export class WorkflowSchedules implements DueSource {
  readonly name = 'workflow-schedules'

  /**
   * @param send hands recorded executions to the durable queue (the engine's relay, which sends
   *   again in the background and leaves the rest to its sweep); a failure is logged.
   */
  constructor(
    private readonly orm: Orm,
    private readonly log: Logger,
    private readonly scheduler: DueScheduler,
    private readonly send: (execution: ScheduledExecution) => Promise<void>,
  ) {
    scheduler.register(this)
  }

  /**
   * Brings workflow `workflowId`'s row in line with the workflow: an active, not deleted workflow
   * whose trigger is a `schedule_trigger` is due at the first match of its cron after now (kept
   * when the cron and zone did not change), any other has no row.
   */
  async sync(workflowId: number, now: Date = new Date()): Promise<void> {
    const db = queries(this.orm.em.fork())
    const row = await db
      .selectFrom('workflows as w')
      .leftJoin('workflow_schedules as s', 's.workflow_id', 'w.id')
      .select(['w.nodes', 'w.is_active', 'w.deleted_at', 's.cron', 's.timezone'])
      .where('w.id', '=', workflowId)
      .executeTakeFirst()
    const schedule = row && row.is_active && !row.deleted_at ? scheduleOf(row.nodes) : null
    const unschedule = () => db.deleteFrom('workflow_schedules').where('workflow_id', '=', workflowId).execute()
    if (!row || !schedule) {
      await unschedule()
      return
    }
    if (row.cron === schedule.cron && row.timezone === schedule.timezone) return
    let next: Date
    try {
      next = cronAfter(schedule.cron, schedule.timezone, now)
    } catch (error) {
      // Saved graphs were checked (nodes/schedule-trigger.ts); one that no longer computes is not scheduled.
      this.log.error({ err: error, workflow: workflowId }, 'workflow schedule does not compute; not scheduled')
      await unschedule()
      return
    }
    await db
      .insertInto('workflow_schedules')
      .values((eb) => ({
        workflow_id: workflowId,
        cron: schedule.cron,
        timezone: schedule.timezone,
        next_run_at: next,
        updated_at: eb.fn('now'),
      }))
      .onConflict((oc) =>
        oc.column('workflow_id').doUpdateSet((eb) => ({
          cron: eb.ref('excluded.cron'),
          timezone: eb.ref('excluded.timezone'),
          next_run_at: eb.ref('excluded.next_run_at'),
          updated_at: eb.fn('now'),
        })),
      )
      .execute()
    this.scheduler.wake(next)
  }

  /**
   * Writes the rows of scheduled workflows that have none (saved before the table existed).
   * Answers how many it wrote.
   */
  async reconcile(): Promise<number> {
    const missing = await queries(this.orm.em.fork())
      .selectFrom('workflows as w')
      .select('w.id')
      .where('w.is_active', '=', true)
      .where('w.deleted_at', 'is', null)
      .where((eb) => eb('w.nodes', '@>', eb.cast<unknown[]>(eb.val('[{"type": "schedule_trigger"}]'), 'jsonb')))
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('workflow_schedules as s').select('s.workflow_id').whereRef('s.workflow_id', '=', 'w.id'))),
      )
      .execute()
    for (const { id } of missing) await this.sync(id)
    return missing.length
  }

  /** The earliest `next_run_at`; null when no workflow is scheduled. */
  async earliestDue(): Promise<Date | null> {
    // An aggregate is not converted: the drivers answer it as text.
    const row = await queries(this.orm.em.fork())
      .selectFrom('workflow_schedules')
      .select((eb) => eb.fn.min<Date | string | null>('next_run_at').as('at'))
      .executeTakeFirst()
    return row?.at ? toDate(row.at) : null
  }

  /** Fires every schedule due at `now` (module comment). Answers how many executions it recorded. */
  async fireDue(now: Date = new Date()): Promise<number> {
    let recorded = 0
    for (;;) {
      const { executions, full } = await this.#takeDue(now)
      recorded += executions.length
      for (const execution of executions) {
        await this.send(execution).catch((error: unknown) => this.log.warn({ err: error, execution: execution.uuid }, 'scheduled execution not sent; the sweep will send it'))
      }
      if (!full) return recorded
    }
  }

  /** One batch of {@link fireDue}, in one transaction. */
  async #takeDue(now: Date): Promise<{ executions: ScheduledExecution[]; full: boolean }> {
    const em = this.orm.em.fork()
    // Cheap when nothing is due, which is almost always: no transaction, one index probe.
    const any = await queries(em)
      .selectFrom('workflow_schedules')
      .select((eb) => eb.lit(1).as('due'))
      .where('next_run_at', '<=', now)
      .limit(1)
      .executeTakeFirst()
    if (!any) return { executions: [], full: false }
    return transactionOnce(this.orm, async (tx) => {
      const due = await queries(tx)
        .selectFrom('workflow_schedules')
        .select(['workflow_id', 'cron', 'timezone', 'next_run_at'])
        .where('next_run_at', '<=', now)
        .orderBy('next_run_at')
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute()
      if (!due.length) return { executions: [], full: false }
      const plans = due.map((row) => {
        const dueAt = row.next_run_at
        let next: Date | null
        try {
          next = cronAfter(row.cron, row.timezone, dueAt.getTime() > now.getTime() ? dueAt : now)
        } catch (error) {
          this.log.error({ err: error, workflow: row.workflow_id }, 'workflow schedule does not compute; it stops after this firing')
          next = null
        }
        return { workflowId: row.workflow_id, dueAt, next }
      })
      const items = plans.map((plan) => ({
        uuid: uuidv7(),
        workflow_id: plan.workflowId,
        due_at: plan.dueAt.toISOString(),
      }))
      // A workflow deactivated or deleted meanwhile gets no execution (the join); its row goes
      // at its next save, or here when its next due time does not compute.
      const executions = await tx.execute<ScheduledExecution[]>(
        `with v as (select * from jsonb_to_recordset(?::jsonb) as v(uuid uuid, workflow_id bigint, due_at text)),
         inserted as (
           insert into workflow_executions (uuid, workflow_id, workspace_id, user_id, status, mode, input, due_at, heartbeat_at, attempts, created_at, updated_at)
           select v.uuid, w.id, w.workspace_id, w.user_id, 'queued', 'schedule',
             jsonb_build_object('scheduled_at', v.due_at), v.due_at::timestamptz, clock_timestamp(), 0, now(), now()
           from v join workflows w on w.id = v.workflow_id and w.is_active and w.deleted_at is null
           on conflict (workflow_id, due_at) where due_at is not null do nothing
           returning id, uuid, workspace_id, workflow_id),
         counted as (
           update workflows w set trigger_count = w.trigger_count + c.n
           from (select workflow_id, count(*)::int as n from inserted group by workflow_id) c where w.id = c.workflow_id)
         select id::float8 as id, uuid, workspace_id::float8 as "workspaceId" from inserted`,
        [JSON.stringify(items)],
      )
      const moving = plans.filter((plan) => plan.next !== null)
      if (moving.length) {
        await tx.execute(
          `update workflow_schedules s set next_run_at = v.next_run_at, updated_at = now()
           from (values ${moving.map(() => '(?::bigint, ?::timestamptz)').join(', ')}) as v(workflow_id, next_run_at)
           where s.workflow_id = v.workflow_id`,
          moving.flatMap((plan) => [plan.workflowId, plan.next]),
        )
      }
      const stopped = plans.filter((plan) => plan.next === null).map((plan) => plan.workflowId)
      if (stopped.length) await queries(tx).deleteFrom('workflow_schedules').where('workflow_id', 'in', stopped).execute()
      return {
        executions: executions.map((row) => ({ id: Number(row.id), uuid: String(row.uuid), workspaceId: Number(row.workspaceId) })),
        full: due.length === BATCH,
      }
    })
  }
}
