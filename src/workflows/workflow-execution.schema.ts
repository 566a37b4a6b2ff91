/**
 * Workflow execution wire shapes (docs/api/resources.md and docs/api/workflows.md) and the row -> wire
 * mappers. The specification leaves the fields of WorkflowExecution "not shown"; ours are the
 * stored columns a client needs to follow and debug a run (docs/api): the workflow it
 * ran, status and mode, input, output, the error with the node it came from, the execution it
 * retries, the triggering user, timings, and on retrieve each node's part in run order.
 */
import { z } from 'zod'
import { EXECUTION_MODES, EXECUTION_STATUSES, NODE_RUN_STATUSES, type ExecutionMode, type ExecutionStatus, type NodeRunStatus } from '../../entities/index.ts'
import { DateOnly, dateOrderRule } from '../metrics/index.ts'
import { NestedUser, toNestedUser, type UserRow } from '../access/user-workspace.schema.ts'
import { envelope, iso, isoOrNull, isRecord, jsonValueOf, paginated, pageQuery, sortParam, timestamp } from '../access/wire.ts'

const workspaceUuid = z.uuid().optional()

/** Sortable columns of the executions list; newest first by default. */
const EXECUTION_SORTS = ['-created_at', 'created_at'] as const

/** The filters the list and the counts share: the workflow and the creation dates (UTC, `date_to` inclusive). */
const executionFilters = {
  workspace_uuid: workspaceUuid,
  workflow_uuid: z.uuid().optional(),
  date_from: DateOnly.optional(),
  date_to: DateOnly.optional(),
}

/** `GET /api/v1/workflow-executions` query: filters, `status`, pagination, `sort`. Unknown keys are a 400. */
export const ListWorkflowExecutionsInput = z
  .strictObject({
    ...pageQuery,
    sort: sortParam(EXECUTION_SORTS, '-created_at'),
    status: z.enum(EXECUTION_STATUSES).optional(),
    ...executionFilters,
  })
  .superRefine(dateOrderRule)
  .prefault({})
export type TListWorkflowExecutionsInput = z.infer<typeof ListWorkflowExecutionsInput>

/** `GET /api/v1/workflow-executions/counts` query: the list's filters without `status` and pagination. */
export const WorkflowExecutionCountsInput = z.strictObject(executionFilters).superRefine(dateOrderRule).prefault({})
export type TWorkflowExecutionCountsInput = z.infer<typeof WorkflowExecutionCountsInput>

/** `{execution_uuid}` of the execution paths (plus the optional workspace context). */
export const WorkflowExecutionPathInput = z.strictObject({ execution_uuid: z.uuid(), workspace_uuid: workspaceUuid })

/** Why an execution failed or stopped: `code` (`canceled`, a node's error code, ...), `message`, the node. */
const ExecutionError = z.object({ code: z.string(), message: z.string(), node_id: z.string().nullable() })

/** A workflow execution (the list's element). */
export const WorkflowExecution = z
  .object({
    uuid: z.uuid(),
    workflow: z.object({ uuid: z.uuid(), name: z.string() }),
    status: z.enum(EXECUTION_STATUSES),
    mode: z.enum(EXECUTION_MODES),
    input: z.unknown(),
    output: z.unknown(),
    error: ExecutionError.nullable(),
    /** The execution this one retries; null when it is no retry or that one was deleted. */
    retry_of_uuid: z.uuid().nullable(),
    /** The triggering user; null for webhook and schedule triggers or a deleted user. */
    user: NestedUser.nullable(),
    started_at: timestamp().nullable(),
    finished_at: timestamp().nullable(),
    /** Milliseconds from `started_at` to `finished_at`; null until it ends, and for one canceled before it started. */
    duration_ms: z.number().int().nullable(),
    /** The W3C trace id of the trace it was started in (docs/operations.md, "Traces"); null when tracing was off or the trace not sampled. */
    trace_id: z.string().nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'WorkflowExecution' })
export type TWorkflowExecution = z.infer<typeof WorkflowExecution>

/** One node's part of an execution (the specification's WorkflowExecutionData). */
export const WorkflowExecutionData = z
  .object({
    node_id: z.string(),
    node_type: z.string(),
    status: z.enum(NODE_RUN_STATUSES),
    input: z.unknown(),
    output: z.unknown(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    /** The output handle(s) the node fired (`true`/`false` of an if). */
    branches: z.array(z.string()).nullable(),
    attempts: z.number().int(),
    started_at: timestamp().nullable(),
    finished_at: timestamp().nullable(),
    /** Milliseconds the node ran. */
    duration_ms: z.number().int().nullable(),
  })
  .meta({ id: 'WorkflowExecutionData' })
export type TWorkflowExecutionData = z.infer<typeof WorkflowExecutionData>

/** A retrieved execution: every field of {@link WorkflowExecution} plus `data`, its nodes in run order. */
export const WorkflowExecutionDetail = WorkflowExecution.extend({ data: z.array(WorkflowExecutionData) }).meta({
  id: 'WorkflowExecutionDetail',
})
export type TWorkflowExecutionDetail = z.infer<typeof WorkflowExecutionDetail>

/** `{data: WorkflowExecution}` (cancel, retry). */
export const WorkflowExecutionResponse = envelope(WorkflowExecution)
/** `{data: WorkflowExecutionDetail}` (retrieve). */
export const WorkflowExecutionDetailResponse = envelope(WorkflowExecutionDetail)
/** A page of executions. */
export const WorkflowExecutionList = paginated(WorkflowExecution)

/** Executions per status, and all of them. */
export const WorkflowExecutionCounts = envelope(
  z
    .object({
      queued: z.number().int(),
      running: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
      canceled: z.number().int(),
      total: z.number().int(),
    })
    .meta({ id: 'WorkflowExecutionCounts' }),
)
export type TWorkflowExecutionCounts = z.infer<typeof WorkflowExecutionCounts>

/**
 * An execution row as src/workflows/workflow-executions.service.ts reads it (user columns prefixed
 * `u_`). Its `jsonb` columns are read as text (`::text`) and parsed by the mappers
 * ({@link jsonValueOf}), so a stored JSON string stays a string on both drivers (`pg` would parse
 * the column itself, and a string it answered would then be parsed again).
 */
export interface ExecutionRow {
  id: number
  uuid: string
  status: ExecutionStatus
  mode: ExecutionMode
  /** `jsonb` as text. */
  input: string | null
  /** `jsonb` as text. */
  output: string | null
  error: string | null
  errorCode: string | null
  errorNodeId: string | null
  startedAt: Date | string | null
  finishedAt: Date | string | null
  durationMs: number | null
  traceId: string | null
  createdAt: Date | string
  updatedAt: Date | string
  workflowUuid: string
  workflowName: string
  retryOfUuid: string | null
}

/** A `workflow_execution_data` row, camelCase. */
export interface ExecutionDataRow {
  nodeId: string
  nodeType: string
  status: NodeRunStatus
  /** `input`, `output`, `error` and `branches`: `jsonb` as text. */
  input: string | null
  output: string | null
  error: string | null
  branches: string | null
  attempts: number
  startedAt: Date | string | null
  finishedAt: Date | string | null
  durationMs: number | null
}

/**
 * An execution row and its triggering user (null when there is none) -> the WorkflowExecution
 * shape; `appUrl` makes the user's photo URL. `error` is null unless an error code or message
 * was stored (a canceled execution has `{code: 'canceled'}`).
 */
export function toWorkflowExecution(row: ExecutionRow, user: UserRow | null, appUrl: string): TWorkflowExecution {
  const failed = row.errorCode !== null || row.error !== null
  return {
    uuid: row.uuid,
    workflow: { uuid: row.workflowUuid, name: row.workflowName },
    status: row.status,
    mode: row.mode,
    input: jsonValueOf(row.input),
    output: jsonValueOf(row.output),
    error: failed ? { code: row.errorCode ?? 'error', message: row.error ?? '', node_id: row.errorNodeId } : null,
    retry_of_uuid: row.retryOfUuid,
    user: user ? toNestedUser(user, appUrl) : null,
    started_at: isoOrNull(row.startedAt),
    finished_at: isoOrNull(row.finishedAt),
    duration_ms: row.durationMs === null ? null : Number(row.durationMs),
    trace_id: row.traceId ?? null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

/** A node's stored `{code, message}` error; anything else written there still reads as an error. */
function nodeErrorOf(value: string | null): { code: string; message: string } | null {
  const parsed = jsonValueOf(value)
  if (parsed === null || parsed === undefined) return null
  if (!isRecord(parsed)) return { code: 'error', message: String(parsed) }
  return { code: String(parsed.code ?? 'error'), message: String(parsed.message ?? '') }
}

/** A `workflow_execution_data` row -> the WorkflowExecutionData shape. */
export function toWorkflowExecutionData(row: ExecutionDataRow): TWorkflowExecutionData {
  const branches = jsonValueOf(row.branches)
  return {
    node_id: row.nodeId,
    node_type: row.nodeType,
    status: row.status,
    input: jsonValueOf(row.input),
    output: jsonValueOf(row.output),
    error: nodeErrorOf(row.error),
    branches: Array.isArray(branches) ? branches.map(String) : null,
    attempts: Number(row.attempts),
    started_at: isoOrNull(row.startedAt),
    finished_at: isoOrNull(row.finishedAt),
    duration_ms: row.durationMs === null ? null : Number(row.durationMs),
  }
}
