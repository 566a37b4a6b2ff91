import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { Agent } from './agent.entity.ts'
import { resourceKeys, softDelete, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'
import { Workflow } from './workflow.entity.ts'

/** What a task's last firing ended as (docs/api/command-room.md, "Task"). */
export const COMMAND_ROOM_LAST_STATUSES = ['succeeded', 'failed', 'skipped'] as const
export type CommandRoomLastStatus = (typeof COMMAND_ROOM_LAST_STATUSES)[number]

/** A firing's status (docs/api/command-room.md, "Firing"). */
export const COMMAND_ROOM_FIRING_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'skipped'] as const
export type CommandRoomFiringStatus = (typeof COMMAND_ROOM_FIRING_STATUSES)[number]

/**
 * A command room task (`command_room_tasks`, docs/api/command-room.md): an agent or a workflow
 * asked to act on `input`, once or on a schedule, as its owner. Exactly one of `agent` and
 * `workflow` is set. `next_run_at` is the next due time the scheduler (src/command-room/scheduler.ts)
 * fires, null when inactive or when a `once` task has fired; the partial index on it is what
 * the scheduler's tick reads. Soft-deleted.
 */
export const CommandRoomTask = defineEntity({
  name: 'CommandRoomTask',
  tableName: 'command_room_tasks',
  indexes: [{ properties: ['user', 'workspace', 'createdAt'] }],
  properties: {
    ...resourceKeys(),
    ...ownership(),
    name: p.string().length(255),
    agent: () =>
      p.manyToOne(Agent)
        .nullable()
        .fieldName('agent_id')
        .deleteRule('cascade'),
    workflow: () =>
      p.manyToOne(Workflow)
        .nullable()
        .fieldName('workflow_id')
        .deleteRule('cascade'),
    /** A string for an agent (the user message), an object for a workflow (the trigger's input). */
    input: p.json<unknown>(),
    schedule: p.string().length(100),
    timezone: p.string().length(100).default('UTC'),
    runAt: p.datetime().fieldName('run_at'),
    isActive: p.boolean().default(true).fieldName('is_active'),
    nextRunAt: p.datetime().nullable().fieldName('next_run_at'),
    lastRunAt: p.datetime().nullable().fieldName('last_run_at'),
    lastStatus: p.enum(COMMAND_ROOM_LAST_STATUSES).nullable().fieldName('last_status'),
    firingsCount: p.integer().default(0).fieldName('firings_count'),
    ...timestamps(),
    ...softDelete(),
  },
})

export type ICommandRoomTask = InferEntity<typeof CommandRoomTask>

/**
 * One firing of a task (`command_room_task_firings`): one per task and due time (the unique key
 * is what makes a due time fire once across processes). `manual` marks a "run now" firing, which
 * fires even while the task is paused. The run, thread or execution it made are kept by uuid: they
 * outlive the task.
 */
export const CommandRoomTaskFiring = defineEntity({
  name: 'CommandRoomTaskFiring',
  tableName: 'command_room_task_firings',
  uniques: [{ properties: ['task', 'dueAt'] }],
  properties: {
    ...resourceKeys(),
    task: () =>
      p.manyToOne(CommandRoomTask)
        .fieldName('task_id')
        .deleteRule('cascade'),
    dueAt: p.datetime().fieldName('due_at'),
    firedAt: p.datetime().nullable().fieldName('fired_at'),
    status: p.enum(COMMAND_ROOM_FIRING_STATUSES).default('queued'),
    manual: p.boolean().default(false),
    runUuid: p.uuid().nullable().fieldName('run_uuid'),
    threadUuid: p.uuid().nullable().fieldName('thread_uuid'),
    executionUuid: p.uuid().nullable().fieldName('execution_uuid'),
    error: p.text().nullable(),
    ...timestamps(),
  },
})

export type ICommandRoomTaskFiring = InferEntity<typeof CommandRoomTaskFiring>
