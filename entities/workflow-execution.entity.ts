import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { recordOwnership, resourceKeys, softDelete, timestamps } from './columns.ts'
import { Workflow } from './workflow.entity.ts'

/** States of an execution. */
export const EXECUTION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number]

/**
 * One run of a workflow (`workflow_executions`). Created for the metrics issue (API.md section 6:
 * executions belong to the workspace of their workflow); the runs issue adds its operations.
 */
export const WorkflowExecution = defineEntity({
  name: 'WorkflowExecution',
  tableName: 'workflow_executions',
  indexes: [{ properties: ['workflow', 'createdAt'] }, { properties: ['workspace', 'createdAt'] }],
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
    error: p.text().nullable(),
    startedAt: p.datetime().nullable().fieldName('started_at'),
    finishedAt: p.datetime().nullable().fieldName('finished_at'),
    durationMs: p.integer().fieldName('duration_ms').nullable(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IWorkflowExecution = InferEntity<typeof WorkflowExecution>
