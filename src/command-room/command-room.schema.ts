/**
 * Command room wire shapes (docs/api/command-room.md): the task and firing shapes with their
 * row -> wire mappers, and the inputs of the endpoints. What zod cannot know (a cron expression
 * that parses, a known time zone, the input's type for its target, `run_at` in the future, the
 * agent or workflow the caller may use) is checked by src/command-room/command-room.service.ts, which
 * answers a 400 naming the field.
 */
import { z } from 'zod'
import { COMMAND_ROOM_FIRING_STATUSES, COMMAND_ROOM_LAST_STATUSES, type CommandRoomFiringStatus, type CommandRoomLastStatus } from '../../entities/index.ts'
import { refineStorableJson, queryBoolean } from '../access/resource.schema.ts'
import { RUN_INPUT_MAX } from '../runs/index.ts'
import { NestedUser, NestedWorkspace, toNestedUser, toWorkspaceBase, type UserRow, type WorkspaceRow } from '../access/user-workspace.schema.ts'
import { envelope, iso, isoOrNull, jsonBoolean, name, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'

/** Longest `schedule` (a named schedule or a five-field cron expression). */
export const SCHEDULE_MAX = 100
/** Longest `timezone`. */
export const TIMEZONE_MAX = 100

/** `{uuid, name}` of a task's agent or workflow. */
const TargetSummary = z.object({ uuid: z.uuid(), name: z.string() })

/** The task shape. */
export const CommandRoomTask = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    agent: TargetSummary.nullable(),
    workflow: TargetSummary.nullable(),
    /** A string for an agent, an object for a workflow. */
    input: z.union([z.string(), z.record(z.string(), z.unknown())]),
    schedule: z.string(),
    timezone: z.string(),
    run_at: timestamp(),
    is_active: z.boolean(),
    /** Null when inactive, or when a `once` task has fired. */
    next_run_at: timestamp().nullable(),
    last_run_at: timestamp().nullable(),
    last_status: z.enum(COMMAND_ROOM_LAST_STATUSES).nullable(),
    firings_count: z.number().int(),
    is_owner: z.boolean(),
    user: NestedUser.nullable(),
    workspace: NestedWorkspace.nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'CommandRoomTask' })
export type TCommandRoomTask = z.infer<typeof CommandRoomTask>

/** `{data: CommandRoomTask}`. */
export const CommandRoomTaskEnvelope = envelope(CommandRoomTask)

/** A task row as src/command-room/command-room.service.ts reads it (the user `u_` and workspace `w_` columns apart). */
export interface CommandRoomTaskRow {
  id: number
  uuid: string
  name: string
  userId: number
  agentUuid: string | null
  agentName: string | null
  workflowUuid: string | null
  workflowName: string | null
  /** The jsonb `input` as JSON text. */
  input: string
  schedule: string
  timezone: string
  runAt: Date | string
  isActive: boolean
  nextRunAt: Date | string | null
  lastRunAt: Date | string | null
  lastStatus: CommandRoomLastStatus | null
  firingsCount: number
  createdAt: Date | string
  updatedAt: Date | string
}

/** Row -> wire; `user` and `workspace` embedded (`viewerId` decides `is_owner`). */
export function toCommandRoomTask(row: CommandRoomTaskRow, related: { user: UserRow; workspace: WorkspaceRow }, viewerId: number, appUrl: string): TCommandRoomTask {
  // Read as JSON text (`input::text`): the driver would hand a jsonb string back unquoted.
  const input: unknown = JSON.parse(row.input)
  return {
    uuid: row.uuid,
    name: row.name,
    agent: row.agentUuid ? { uuid: row.agentUuid, name: row.agentName ?? '' } : null,
    workflow: row.workflowUuid ? { uuid: row.workflowUuid, name: row.workflowName ?? '' } : null,
    input: typeof input === 'string' || (typeof input === 'object' && input !== null && !Array.isArray(input)) ? (input as string | Record<string, unknown>) : '',
    schedule: row.schedule,
    timezone: row.timezone,
    run_at: iso(row.runAt),
    is_active: Boolean(row.isActive),
    next_run_at: isoOrNull(row.nextRunAt),
    last_run_at: isoOrNull(row.lastRunAt),
    last_status: row.lastStatus,
    firings_count: Number(row.firingsCount),
    is_owner: Number(row.userId) === viewerId,
    user: toNestedUser(related.user, appUrl),
    workspace: { ...toWorkspaceBase(related.workspace, viewerId, appUrl), user: null },
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

/** The firing shape. */
export const CommandRoomFiring = z
  .object({
    uuid: z.uuid(),
    due_at: timestamp(),
    fired_at: timestamp().nullable(),
    status: z.enum(COMMAND_ROOM_FIRING_STATUSES),
    run_uuid: z.uuid().nullable(),
    execution_uuid: z.uuid().nullable(),
    thread_uuid: z.uuid().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'CommandRoomFiring' })
export type TCommandRoomFiring = z.infer<typeof CommandRoomFiring>

/** `{data: CommandRoomFiring}`. */
export const CommandRoomFiringEnvelope = envelope(CommandRoomFiring)

/** The columns of a firing as {@link CommandRoomFiringRow}, over `f`. */
export const FIRING_COLUMNS = `f.id::float8 as id, f.uuid, f.due_at as "dueAt", f.fired_at as "firedAt", f.status, f.run_uuid as "runUuid",
  f.execution_uuid as "executionUuid", f.thread_uuid as "threadUuid", f.error`

/** A firing row as {@link FIRING_COLUMNS} reads it. */
export interface CommandRoomFiringRow {
  id: number
  uuid: string
  dueAt: Date | string
  firedAt: Date | string | null
  status: CommandRoomFiringStatus
  runUuid: string | null
  executionUuid: string | null
  threadUuid: string | null
  error: string | null
}

/** Row -> wire. */
export function toCommandRoomFiring(row: CommandRoomFiringRow): TCommandRoomFiring {
  return {
    uuid: row.uuid,
    due_at: iso(row.dueAt),
    fired_at: isoOrNull(row.firedAt),
    status: row.status,
    run_uuid: row.runUuid,
    execution_uuid: row.executionUuid,
    thread_uuid: row.threadUuid,
    error: row.error,
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs.

/** A task's `input`: a string (an agent's user message) or an object (a workflow trigger's input); which one the target takes is the service's check. */
const TaskInput = z.union([
  text(RUN_INPUT_MAX),
  z.record(z.string(), z.unknown()).superRefine((value, ctx) => refineStorableJson(value, ctx)),
])

/** The fields a store and an update share. */
const taskFields = {
  name: name(255),
  agent_uuid: z.uuid(),
  workflow_uuid: z.uuid(),
  input: TaskInput,
  schedule: text(SCHEDULE_MAX, 1),
  timezone: text(TIMEZONE_MAX, 1),
  run_at: z.iso.datetime({ offset: true }),
  is_active: jsonBoolean(),
}

/** `POST /api/v1/command-room/tasks`. */
export const StoreCommandRoomTaskInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: taskFields.name,
  agent_uuid: taskFields.agent_uuid.optional(),
  workflow_uuid: taskFields.workflow_uuid.optional(),
  input: taskFields.input.optional(),
  schedule: taskFields.schedule,
  timezone: taskFields.timezone.default('UTC'),
  run_at: taskFields.run_at.optional(),
  is_active: taskFields.is_active.default(true),
})
export type TStoreCommandRoomTaskInput = z.infer<typeof StoreCommandRoomTaskInput>

/** `PUT /api/v1/command-room/tasks/{task_uuid}`: omitted fields keep their value. */
export const UpdateCommandRoomTaskInput = z.strictObject({
  task_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  name: taskFields.name.optional(),
  agent_uuid: taskFields.agent_uuid.optional(),
  workflow_uuid: taskFields.workflow_uuid.optional(),
  input: taskFields.input.optional(),
  schedule: taskFields.schedule.optional(),
  timezone: taskFields.timezone.optional(),
  run_at: taskFields.run_at.optional(),
  is_active: taskFields.is_active.optional(),
})
export type TUpdateCommandRoomTaskInput = z.infer<typeof UpdateCommandRoomTaskInput>

/** Sortable columns of the task list. */
export const COMMAND_ROOM_TASK_SORTS = ['created_at', '-created_at', 'name', '-name', 'next_run_at', '-next_run_at', 'updated_at', '-updated_at'] as const

/** `GET /api/v1/command-room/tasks`. */
export const CommandRoomTaskListInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  ...pageQuery,
  sort: sortParam(COMMAND_ROOM_TASK_SORTS, '-created_at'),
  agent_uuid: z.uuid().optional(),
  workflow_uuid: z.uuid().optional(),
  is_active: queryBoolean().optional(),
}).prefault({})
export type TCommandRoomTaskListInput = z.infer<typeof CommandRoomTaskListInput>

/** Path of retrieve, delete and run. */
export const CommandRoomTaskPathInput = z.strictObject({ task_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** `GET /api/v1/command-room/tasks/{task_uuid}/firings`: newest first. */
export const CommandRoomFiringListInput = z.strictObject({
  task_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  ...pageQuery,
})
export type TCommandRoomFiringListInput = z.infer<typeof CommandRoomFiringListInput>
