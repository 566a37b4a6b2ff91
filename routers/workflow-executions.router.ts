/**
 * Workflow executions (docs/api/resources.md and docs/api/workflows.md): list, counts per status,
 * retrieve with per-node data, delete, cancel and retry. `/counts` is declared before the
 * `/{execution_uuid}` paths so the static path is matched first.
 */
import { z } from 'zod'
import { executions } from '../src/workflows/index.ts'
import { ListWorkflowExecutionsInput, WorkflowExecutionCounts, WorkflowExecutionCountsInput, WorkflowExecutionDetailResponse, WorkflowExecutionList, WorkflowExecutionPathInput, WorkflowExecutionResponse } from '../src/workflows/index.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Workflow executions']
const base = '/api/v1/workflow-executions'
const path = `${base}/{execution_uuid}`

export const workflowExecutionsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: 'Executions of the workflows the caller may see', protect: true } })
    .input(ListWorkflowExecutionsInput)
    .output(WorkflowExecutionList)
    .query(({ ctx, input }) => executions.list(ctx, input)),

  counts: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${base}/counts`, tags, summary: 'Executions per status', protect: true } })
    .input(WorkflowExecutionCountsInput)
    .output(WorkflowExecutionCounts)
    .query(({ ctx, input }) => executions.counts(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path, tags, summary: 'Retrieve an execution with its per-node data', protect: true } })
    .input(WorkflowExecutionPathInput)
    .output(WorkflowExecutionDetailResponse)
    .query(({ ctx, input }) => executions.retrieve(ctx, input.execution_uuid)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path, tags, summary: 'Delete an ended execution (write permission; 409 while queued or running)', protect: true },
      successStatus: 204,
    })
    .input(WorkflowExecutionPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => executions.remove(ctx, input.execution_uuid)),

  cancel: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: `${path}/cancel`, tags, summary: 'Cancel a queued or running execution (409 once it ended)', protect: true } })
    .input(WorkflowExecutionPathInput)
    .output(WorkflowExecutionResponse)
    .mutation(({ ctx, input }) => executions.cancel(ctx, input.execution_uuid)),

  retry: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${path}/retry`, tags, summary: 'Retry a failed or canceled execution: 202 with the new execution', protect: true },
      successStatus: 202,
    })
    .input(WorkflowExecutionPathInput)
    .output(WorkflowExecutionResponse)
    .mutation(({ ctx, input }) => executions.retry(ctx, input.execution_uuid)),
})
