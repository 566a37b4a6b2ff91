import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { resourceKeys, softDelete, timestamps } from './columns.ts'
import { recordOwnership } from './ownership.ts'
import { Workflow } from './workflow.entity.ts'

/** States of an execution (docs/api/workflows.md): `queued` -> `running` -> `succeeded` | `failed` | `canceled`. */
export const EXECUTION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number]

/** What started an execution (`mode`). */
export const EXECUTION_MODES = ['manual', 'webhook', 'schedule', 'retry'] as const
export type ExecutionMode = (typeof EXECUTION_MODES)[number]

/** States of one node within an execution: `pinned` used its `pin_data`, `skipped` sat on a branch not taken. */
export const NODE_RUN_STATUSES = ['succeeded', 'failed', 'skipped', 'pinned', 'canceled'] as const
export type NodeRunStatus = (typeof NODE_RUN_STATUSES)[number]

/**
 * One run of a workflow (`workflow_executions`, docs/api/metrics.md and docs/api/workflows.md): recorded before it
 * starts, then claimed by the process that runs it, which keeps `heartbeat_at` fresh; the
 * recovery sweep resumes or fails a `running` execution whose heartbeat stopped (src/workflows/engine.ts).
 */
export const WorkflowExecution = defineEntity({
  name: 'WorkflowExecution',
  tableName: 'workflow_executions',
  indexes: [
    { properties: ['workflow', 'createdAt'] },
    { properties: ['workspace', 'createdAt'] },
    // The recovery sweep's look-up: the few unfinished executions, oldest heartbeat first.
    {
      name: 'workflow_executions_unfinished_index',
      expression:
        `create index "workflow_executions_unfinished_index" on "workflow_executions" ("heartbeat_at") where "status" in ('queued', 'running')`,
    },
  ],
  uniques: [
    // One execution per scheduled workflow and due time, whichever process fires it.
    {
      name: 'workflow_executions_workflow_id_due_at_unique',
      expression:
        `create unique index "workflow_executions_workflow_id_due_at_unique" on "workflow_executions" ("workflow_id", "due_at") where "due_at" is not null`,
    },
  ],
  properties: {
    ...resourceKeys(),
    workflow: () =>
      p.manyToOne(Workflow)
        .fieldName('workflow_id')
        .deleteRule('cascade'),
    /** `user`: the triggering user. */
    ...recordOwnership(),
    status: p.enum(EXECUTION_STATUSES).default('queued'),
    mode: p.string().length(32).default('manual'),
    input: p.json<unknown>().nullable(),
    output: p.json<unknown>().nullable(),
    /** The failure's message; `error_code` and `error_node_id` say which kind and where. */
    error: p.text().nullable(),
    errorCode: p.string().length(64).nullable().fieldName('error_code'),
    errorNodeId: p.string().length(100).nullable().fieldName('error_node_id'),
    /** The execution this one retries (`POST workflow-executions/{x}/retry`). */
    retryOf: p.bigint('number').nullable().fieldName('retry_of_id'),
    /** Refreshed by the process running it; stale means that process died. */
    heartbeatAt: p.datetime().nullable().fieldName('heartbeat_at'),
    /**
     * How many times a process took it to run (1 for the first run, one more per resumption): only
     * the process whose claim is current may beat for it, store its progress or settle it.
     */
    attempts: p.integer().default(0),
    /**
     * What an interrupted execution resumes from (`settings.on_interrupt: resume`): the nodes that
     * finished, in order, and the execution's view of the static data they left (src/workflows/executor.ts).
     */
    checkpoint: p.json<unknown>().nullable(),
    startedAt: p.datetime().nullable().fieldName('started_at'),
    finishedAt: p.datetime().nullable().fieldName('finished_at'),
    durationMs: p.integer().fieldName('duration_ms').nullable(),
    /** The W3C trace id of the trace it was started in (docs/operations.md, "Traces"); null when tracing was off or the trace not sampled. */
    traceId: p.string().length(32).nullable().fieldName('trace_id'),
    /** The due time a schedule trigger fired it for (`mode` `schedule`); also its input's `scheduled_at`. */
    dueAt: p.datetime().nullable().fieldName('due_at'),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IWorkflowExecution = InferEntity<typeof WorkflowExecution>

/**
 * One node's part of an execution (`workflow_execution_data`, the specification's
 * WorkflowExecutionData): its input, output, error, attempts and timings, written when the
 * execution settles (in `position` order, the order the nodes ran).
 */
export const WorkflowExecutionData = defineEntity({
  name: 'WorkflowExecutionData',
  tableName: 'workflow_execution_data',
  indexes: [{ properties: ['execution', 'position'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    execution: () =>
      p.manyToOne(WorkflowExecution)
        .fieldName('execution_id')
        .deleteRule('cascade'),
    position: p.integer(),
    nodeId: p.string().length(100).fieldName('node_id'),
    nodeType: p.string().length(100).fieldName('node_type'),
    status: p.enum(NODE_RUN_STATUSES),
    input: p.json<unknown>().nullable(),
    output: p.json<unknown>().nullable(),
    /** `{code, message}` of a failed node. */
    error: p.json<{ code: string; message: string }>().nullable(),
    /** The output handle(s) the node fired (`true`/`false` of an if, a switch case). */
    branches: p.json<string[]>().nullable(),
    attempts: p.integer().default(0),
    startedAt: p.datetime().nullable().fieldName('started_at'),
    finishedAt: p.datetime().nullable().fieldName('finished_at'),
    durationMs: p.integer().nullable().fieldName('duration_ms'),
  },
})

export type IWorkflowExecutionData = InferEntity<typeof WorkflowExecutionData>
