/**
 * Command room tasks (docs/api/command-room.md): store, list, retrieve, update, remove and fire
 * now, and the firings of a task. The scheduler that fires them is src/command-room/engine.ts;
 * what a firing does is src/command-room/command-room-firing.ts.
 *
 * A task is its owner's alone, in the workspace it was stored in (the request's workspace
 * context), like memories and runs (docs/api/tenancy.md, "Permissions"): it acts as its owner, with
 * the owner's permissions, so nobody else lists, reads, changes, fires or removes it; to anyone
 * else it does not exist (404). Everything a body names is checked before anything is written:
 * a bad value is a 400 naming its field, and an agent or workflow the caller cannot see is a 400
 * naming the field exactly as an unknown uuid.
 */
import { uuidv7 } from 'uuidv7'
import { requireResource } from '../access/resource-access.ts'
import { queries, retryOnConnectionLoss, writeOnce, type Em } from '../platform/db.ts'
import { NotFoundError, ValidationError } from '../platform/errors.ts'
import { toDate, unprefix, userColumns, workspaceColumns, type SqlFragment } from '../platform/sql.ts'
import {
  FIRING_COLUMNS,
  toCommandRoomFiring,
  toCommandRoomTask,
  type CommandRoomFiringRow,
  type CommandRoomTaskRow,
  type TCommandRoomFiring,
  type TCommandRoomFiringListInput,
  type TCommandRoomTask,
  type TCommandRoomTaskListInput,
  type TStoreCommandRoomTaskInput,
  type TUpdateCommandRoomTaskInput,
} from './command-room.schema.ts'
import type { UserRow, WorkspaceRow } from '../access/user-workspace.schema.ts'
import { isRecord, storableJson } from '../access/wire.ts'
import { cronProblem, firstDueAt, isTimeZone, NAMED_SCHEDULES, type ScheduleSpec } from './schedule.ts'
import { Conditions } from '../access/list-filters.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import type { ResourceCtx } from '../context.ts'
import { audit, fieldChanges } from '../access/audit.ts'

/** The tasks the caller sees, over alias `t`: their own live tasks in the request's workspace. */
export function taskScopeSql(alias: string, ctx: ResourceCtx): SqlFragment {
  return {
    sql: `(${alias}.user_id = ? and ${alias}.workspace_id = ? and ${alias}.deleted_at is null)`,
    params: [ctx.auth.user.id, ctx.workspace.workspace.id],
  }
}

const TASK_COLUMNS = `t.id::float8 as id, t.uuid, t.name, t.user_id::float8 as "userId", a.uuid as "agentUuid", a.name as "agentName",
  wf.uuid as "workflowUuid", wf.name as "workflowName", t.input::text as input, t.schedule, t.timezone, t.run_at as "runAt", t.is_active as "isActive",
  t.next_run_at as "nextRunAt", t.last_run_at as "lastRunAt", t.last_status as "lastStatus", t.firings_count as "firingsCount",
  t.created_at as "createdAt", t.updated_at as "updatedAt", ${userColumns('u', 'u_')}, ${workspaceColumns('w', 'w_')}`

const SOURCE: ListSource = {
  // An agent or workflow deleted since shows as null: the task fails at its next firing and stops.
  from: `command_room_tasks t join users u on u.id = t.user_id join workspaces w on w.id = t.workspace_id
    left join agents a on a.id = t.agent_id and a.deleted_at is null left join workflows wf on wf.id = t.workflow_id and wf.deleted_at is null`,
  columns: TASK_COLUMNS,
  alias: 't',
  sorts: { created_at: 't.created_at', name: 'lower(t.name)', next_run_at: 't.next_run_at', updated_at: 't.updated_at' },
}

const toTask = (ctx: ResourceCtx, row: Record<string, unknown>): TCommandRoomTask =>
  toCommandRoomTask(
    row as unknown as CommandRoomTaskRow,
    { user: unprefix<UserRow>(row, 'u_'), workspace: unprefix<WorkspaceRow>(row, 'w_') },
    ctx.auth.user.id,
    ctx.config.appUrl,
  )

async function readTask(ctx: ResourceCtx, em: Em, id: number): Promise<{ data: TCommandRoomTask }> {
  const [row] = await em.execute<Record<string, unknown>[]>(`select ${SOURCE.columns} from ${SOURCE.from} where t.id = ?`, [id])
  if (!row) throw new NotFoundError('Command room task')
  return { data: toTask(ctx, row) }
}

/**
 * Task `id`'s fields as the audit log records them (docs/api/audit.md), under the API's names,
 * read with `em` (the transaction of the change).
 */
async function auditedTask(em: Em, id: number): Promise<{ uuid: string; fields: Record<string, unknown> }> {
  const [row] = await em.execute<Record<string, unknown>[]>(
    `select t.uuid, t.name, a.uuid as agent_uuid, wf.uuid as workflow_uuid, t.input::text as input, t.schedule, t.timezone,
       t.run_at, t.is_active
     from command_room_tasks t left join agents a on a.id = t.agent_id left join workflows wf on wf.id = t.workflow_id where t.id = ?`,
    [id],
  )
  const { uuid, input, run_at: runAt, ...fields } = row
  return { uuid: String(uuid), fields: { ...fields, input: JSON.parse(String(input)) as unknown, run_at: toDate(runAt as Date | string) } }
}

/** A task of the caller's as stored. */
interface StoredTask {
  id: number
  agentId: number | null
  workflowId: number | null
  input: unknown
  schedule: string
  timezone: string
  runAt: Date
  isActive: boolean
}

/**
 * One of the caller's live tasks in the request's workspace (`lock`: its row locked for the
 * transaction of `em`, so the scheduler's tick skips it meanwhile).
 * @throws NotFoundError otherwise.
 */
async function requireTask(ctx: ResourceCtx, em: Em, uuid: string, lock = false): Promise<StoredTask> {
  const scope = taskScopeSql('t', ctx)
  const [row] = await em.execute<Record<string, unknown>[]>(
    `select t.id::float8 as id, t.agent_id::float8 as "agentId", t.workflow_id::float8 as "workflowId", t.input::text as input, t.schedule, t.timezone,
       t.run_at as "runAt", t.is_active as "isActive"
     from command_room_tasks t where t.uuid = ? and ${scope.sql}${lock ? ' for update' : ''}`,
    [uuid, ...scope.params],
  )
  if (!row) throw new NotFoundError('Command room task')
  return {
    id: Number(row.id),
    agentId: row.agentId == null ? null : Number(row.agentId),
    workflowId: row.workflowId == null ? null : Number(row.workflowId),
    input: JSON.parse(String(row.input)) as unknown,
    schedule: String(row.schedule),
    timezone: String(row.timezone),
    runAt: toDate(row.runAt as Date | string),
    isActive: Boolean(row.isActive),
  }
}

/**
 * The id of the agent or workflow `uuid` if the caller may run it (`read`, docs/api/tenancy.md).
 * @throws ValidationError naming `field` as an unknown uuid otherwise (never revealing a row the
 *   caller cannot see).
 */
async function resolveTarget(ctx: ResourceCtx, kind: 'agent' | 'workflow', uuid: string): Promise<number> {
  const field = kind === 'agent' ? 'agent_uuid' : 'workflow_uuid'
  try {
    const access = await requireResource(
      ctx,
      kind === 'agent' ? 'agents' : 'workflows',
      kind === 'agent' ? 'Agent' : 'Workflow',
      uuid,
      'read',
    )
    return access.id
  } catch (error) {
    if (error instanceof NotFoundError) throw new ValidationError([field], `Unknown ${kind} ${uuid}`)
    throw error
  }
}

/** `timezone` and `schedule` checked. @throws ValidationError naming `timezone` or `schedule`. */
function checkSchedule(schedule: string, timezone: string): void {
  if (!isTimeZone(timezone)) {
    throw new ValidationError(['timezone'], `Unknown time zone "${timezone}": use an IANA name such as Europe/Paris`)
  }
  if ((NAMED_SCHEDULES as readonly string[]).includes(schedule)) return
  const problem = cronProblem(schedule, timezone)
  if (problem) throw new ValidationError(['schedule'], `${problem}; or use once, hourly, daily or weekly`)
}

/** `input` for a target of `kind`, defaulted. @throws ValidationError naming `input` when its type is the other target's. */
function checkInput(kind: 'agent' | 'workflow', input: unknown): string | Record<string, unknown> {
  if (kind === 'agent') {
    if (input === undefined) return ''
    if (typeof input !== 'string') throw new ValidationError(['input'], "An agent task's input is a string: the user message")
    return input
  }
  if (input === undefined) return {}
  if (!isRecord(input)) throw new ValidationError(['input'], "A workflow task's input is an object: the trigger's input")
  return input
}

/** Refuses a body naming both targets. @throws ValidationError naming `workflow_uuid`. */
function refuseBothTargets(input: { agent_uuid?: string; workflow_uuid?: string }): void {
  if (input.agent_uuid && input.workflow_uuid) {
    throw new ValidationError(['workflow_uuid'], 'A task runs an agent or a workflow: give agent_uuid or workflow_uuid, not both')
  }
}

/** The start of the next whole minute after `now`. */
const nextWholeMinute = (now: Date) => new Date(Math.floor(now.getTime() / 60_000) * 60_000 + 60_000)

/**
 * `next_run_at` of a task: its first due time from `now` when active, else null.
 * @throws ValidationError naming `run_at` for a `once` task whose `run_at` is not in the future.
 */
function nextRunAt(spec: ScheduleSpec, isActive: boolean, now: Date): Date | null {
  if (spec.schedule === 'once' && isActive && spec.runAt.getTime() <= now.getTime()) {
    throw new ValidationError(['run_at'], 'A once task runs at run_at, which must be in the future')
  }
  return isActive ? firstDueAt(spec, now) : null
}

/**
 * `POST /api/v1/command-room/tasks` (201): stores a task of the caller's in the request's workspace.
 * @throws ValidationError naming `agent_uuid` / `workflow_uuid` (neither, both, or one the caller
 *   cannot run), `timezone`, `schedule`, `run_at` or `input`.
 */
export async function store(ctx: ResourceCtx, input: TStoreCommandRoomTaskInput): Promise<{ data: TCommandRoomTask }> {
  refuseBothTargets(input)
  if (!input.agent_uuid && !input.workflow_uuid) {
    throw new ValidationError(['agent_uuid'], 'A task runs an agent or a workflow: give agent_uuid or workflow_uuid')
  }
  const kind = input.agent_uuid ? 'agent' : 'workflow'
  checkSchedule(input.schedule, input.timezone)
  if (input.schedule === 'once' && !input.run_at) throw new ValidationError(['run_at'], 'A once task needs run_at')
  const taskInput = checkInput(kind, input.input)
  const now = new Date()
  const spec: ScheduleSpec = {
    schedule: input.schedule,
    timezone: input.timezone,
    runAt: input.run_at ? new Date(input.run_at) : nextWholeMinute(now),
  }
  if (input.schedule === 'once' && spec.runAt.getTime() <= now.getTime()) {
    throw new ValidationError(['run_at'], 'A once task runs at run_at, which must be in the future')
  }
  const next = nextRunAt(spec, input.is_active, now)
  const targetId = await resolveTarget(ctx, kind, (input.agent_uuid ?? input.workflow_uuid) as string)
  const id = await ctx.em.transactional(async (em) => {
    const row = await queries(em)
      .insertInto('command_room_tasks')
      .values((eb) => ({
        uuid: uuidv7(),
        user_id: ctx.auth.user.id,
        workspace_id: ctx.workspace.workspace.id,
        name: input.name.trim(),
        agent_id: kind === 'agent' ? targetId : null,
        workflow_id: kind === 'workflow' ? targetId : null,
        // Already JSON (storableJson cleaned it), so cast rather than converted again.
        input: eb.cast(eb.val(storableJson(taskInput)), 'jsonb'),
        schedule: input.schedule.trim(),
        timezone: input.timezone,
        run_at: spec.runAt,
        is_active: input.is_active,
        next_run_at: next,
        firings_count: 0,
        created_at: eb.fn('now'),
        updated_at: eb.fn('now'),
      }))
      .returning('id')
      .executeTakeFirstOrThrow()
    const created = await auditedTask(em, row.id)
    await audit(em, ctx, {
      action: 'command_room_task.create',
      resource: { type: 'command_room_task', uuid: created.uuid },
      changes: fieldChanges(null, created.fields),
    })
    return row.id
  })
  ctx.deps.commandRoom.wake(next)
  return readTask(ctx, ctx.em, id)
}

/** `GET /api/v1/command-room/tasks`: the caller's tasks in the workspace, filtered by `agent_uuid`, `workflow_uuid` and `is_active`, paginated. */
export async function list(ctx: ResourceCtx, input: TCommandRoomTaskListInput) {
  const where = new Conditions(taskScopeSql('t', ctx))
  if (input.agent_uuid) where.add('a.uuid = ?', input.agent_uuid)
  if (input.workflow_uuid) where.add('wf.uuid = ?', input.workflow_uuid)
  if (input.is_active !== undefined) where.add('t.is_active = ?', input.is_active)
  const query = {
    agent_uuid: input.agent_uuid,
    workflow_uuid: input.workflow_uuid,
    is_active: input.is_active === undefined ? undefined : String(input.is_active),
  }
  return listPage(ctx, SOURCE, where.toSql(), input, { path: '/api/v1/command-room/tasks', query }, (row) => toTask(ctx, row))
}

/** `GET /api/v1/command-room/tasks/{task_uuid}`. @throws NotFoundError. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TCommandRoomTask }> {
  // One statement: the caller's scope is the read's own condition.
  const scope = taskScopeSql('t', ctx)
  const [row] = await ctx.em.execute<Record<string, unknown>[]>(
    `select ${SOURCE.columns} from ${SOURCE.from} where t.uuid = ? and ${scope.sql}`,
    [uuid, ...scope.params],
  )
  if (!row) throw new NotFoundError('Command room task')
  return { data: toTask(ctx, row) }
}

/**
 * `PUT /api/v1/command-room/tasks/{task_uuid}`: omitted fields keep their value. Naming
 * `agent_uuid` or `workflow_uuid` points the task at that target instead (its input back to the
 * default unless one is given). A change of `schedule`, `timezone`, `run_at` or `is_active`
 * recomputes `next_run_at` from now under the task's row lock, so a pause, a resume or a new
 * schedule holds from the next due time on.
 * @throws NotFoundError; ValidationError as {@link store}.
 */
export async function update(ctx: ResourceCtx, input: TUpdateCommandRoomTaskInput): Promise<{ data: TCommandRoomTask }> {
  refuseBothTargets(input)
  // Resolved before the transaction: every reference is known usable before anything is written
  // (and on PGlite a statement outside the transaction would wait for it).
  const retargetId = input.agent_uuid
    ? await resolveTarget(ctx, 'agent', input.agent_uuid)
    : input.workflow_uuid
      ? await resolveTarget(ctx, 'workflow', input.workflow_uuid)
      : null
  const updated = await ctx.em.transactional(async (em) => {
    const task = await requireTask(ctx, em, input.task_uuid, true)
    const before = await auditedTask(em, task.id)
    const schedule = input.schedule?.trim() ?? task.schedule
    const timezone = input.timezone ?? task.timezone
    if (input.schedule !== undefined || input.timezone !== undefined) checkSchedule(schedule, timezone)
    const retarget = input.agent_uuid ? ('agent' as const) : input.workflow_uuid ? ('workflow' as const) : null
    const kind = retarget ?? (task.agentId !== null ? 'agent' : 'workflow')
    const currentKind = task.agentId !== null ? 'agent' : 'workflow'
    const taskInput = checkInput(kind, input.input ?? (kind === currentKind ? task.input : undefined))
    const isActive = input.is_active ?? task.isActive
    const spec: ScheduleSpec = { schedule, timezone, runAt: input.run_at ? new Date(input.run_at) : task.runAt }
    const reschedule =
      input.schedule !== undefined || input.timezone !== undefined || input.run_at !== undefined || isActive !== task.isActive
    const now = new Date()
    const next = reschedule ? nextRunAt(spec, isActive, now) : undefined
    let agentId = task.agentId
    let workflowId = task.workflowId
    if (retarget === 'agent') [agentId, workflowId] = [retargetId, null]
    if (retarget === 'workflow') [agentId, workflowId] = [null, retargetId]
    await queries(em)
      .updateTable('command_room_tasks')
      .set((eb) => ({
        ...(input.name === undefined ? {} : { name: input.name.trim() }),
        agent_id: agentId,
        workflow_id: workflowId,
        input: eb.cast(eb.val(storableJson(taskInput)), 'jsonb'),
        schedule,
        timezone,
        run_at: spec.runAt,
        is_active: isActive,
        ...(next === undefined ? {} : { next_run_at: next }),
        updated_at: eb.fn('now'),
      }))
      .where('id', '=', task.id)
      .execute()
    const after = await auditedTask(em, task.id)
    await audit(em, ctx, {
      action: 'command_room_task.update',
      resource: { type: 'command_room_task', uuid: before.uuid },
      changes: fieldChanges(before.fields, after.fields),
    })
    return { id: task.id, next }
  })
  ctx.deps.commandRoom.wake(updated.next ?? null)
  return readTask(ctx, ctx.em, updated.id)
}

/**
 * `DELETE /api/v1/command-room/tasks/{task_uuid}` (204): removes the task (soft, `deleted_at`) and
 * stops its future firings: a firing already queued is skipped. Its past runs and executions stay.
 * @throws NotFoundError.
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  await ctx.em.transactional(async (em) => {
    const task = await requireTask(ctx, em, uuid, true)
    await queries(em)
      .updateTable('command_room_tasks')
      .set((eb) => ({ deleted_at: eb.fn('now'), is_active: false, next_run_at: null, updated_at: eb.fn('now') }))
      .where('id', '=', task.id)
      .execute()
    await audit(em, ctx, { action: 'command_room_task.delete', resource: { type: 'command_room_task', uuid } })
  })
}

/**
 * `POST /api/v1/command-room/tasks/{task_uuid}/run` (202): fires the task now, paused or not,
 * through the same queue and actor as its scheduled firings (due time: now). Its schedule is
 * left as it is. Answers the firing, `queued`. The firing is stored once though the database
 * connection is lost on the way (`writeOnce`: after a lost connection it is looked for by the
 * uuid chosen for it before it is stored again) and then read again on a new connection, so no
 * 503 is answered for a firing that was stored and will fire.
 * @throws NotFoundError; the database's error when it cannot be stored.
 */
export async function runNow(ctx: ResourceCtx, uuid: string): Promise<{ data: TCommandRoomFiring }> {
  const firingUuid = uuidv7()
  const stored = async () =>
    (await queries(ctx.em).selectFrom('command_room_task_firings').select('id').where('uuid', '=', firingUuid).executeTakeFirst())?.id
  const insert = () =>
    ctx.em.transactional(async (em) => {
      const task = await requireTask(ctx, em, uuid, true)
      const db = queries(em)
      const firing = await db
        .insertInto('command_room_task_firings')
        .values((eb) => ({
          uuid: firingUuid,
          task_id: task.id,
          due_at: eb.fn('clock_timestamp'),
          status: 'queued',
          manual: true,
          created_at: eb.fn('now'),
          updated_at: eb.fn('now'),
        }))
        .returning('id')
        .executeTakeFirstOrThrow()
      await db
        .updateTable('command_room_tasks')
        .set((eb) => ({ firings_count: eb('firings_count', '+', 1), updated_at: eb.fn('now') }))
        .where('id', '=', task.id)
        .execute()
      return firing.id
    })
  const firingId = await writeOnce(insert, stored)
  const data = await retryOnConnectionLoss(() => readFiring(ctx.em, firingId))
  try {
    await ctx.deps.commandRoom.send(data.uuid)
  } catch (error) {
    ctx.log.warn({ err: error, firing: data.uuid }, 'firing not sent; the command room sweep will send it')
  }
  return { data }
}

async function readFiring(em: Em, id: number): Promise<TCommandRoomFiring> {
  const [row] = await em.execute<CommandRoomFiringRow[]>(`select ${FIRING_COLUMNS} from command_room_task_firings f where f.id = ?`, [id])
  if (!row) throw new NotFoundError('Command room firing')
  return toCommandRoomFiring(row)
}

const FIRING_SOURCE: ListSource = {
  from: 'command_room_task_firings f',
  columns: FIRING_COLUMNS,
  alias: 'f',
  sorts: { due_at: 'f.due_at' },
}

/** `GET /api/v1/command-room/tasks/{task_uuid}/firings`: the task's firings, newest due time first, paginated. @throws NotFoundError. */
export async function firings(ctx: ResourceCtx, input: TCommandRoomFiringListInput) {
  const task = await requireTask(ctx, ctx.em, input.task_uuid)
  const where = { sql: 'f.task_id = ?', params: [task.id] }
  return listPage(
    ctx,
    FIRING_SOURCE,
    where,
    { ...input, sort: '-due_at' },
    { path: `/api/v1/command-room/tasks/${input.task_uuid}/firings`, query: {} },
    (row) => toCommandRoomFiring(row as unknown as CommandRoomFiringRow),
  )
}

/**
 * One firing of a task the caller may see, as `GET .../firings` lists it (the `data` of the
 * `command_room_firing.*` webhook events, docs/api/webhooks.md).
 * @throws NotFoundError when there is no such firing or its task is not the caller's to see.
 */
export async function firing(ctx: ResourceCtx, uuid: string): Promise<{ data: TCommandRoomFiring }> {
  const scope = taskScopeSql('t', ctx)
  const [row] = await ctx.em.execute<CommandRoomFiringRow[]>(
    `select ${FIRING_COLUMNS} from command_room_task_firings f join command_room_tasks t on t.id = f.task_id where f.uuid = ? and ${scope.sql}`,
    [uuid, ...scope.params],
  )
  if (!row) throw new NotFoundError('Command room firing')
  return { data: toCommandRoomFiring(row) }
}
