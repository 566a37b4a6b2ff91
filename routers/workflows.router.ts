/** Workflows as stored resources (specification: "Workflow"; API.md sections 5 and 7). */
import { z } from 'zod'
import * as workflows from '../src/services/workflows.service.ts'
import {
  CreateWorkflowInput,
  ListWorkflowsInput,
  UpdateWorkflowInput,
  WorkflowList,
  WorkflowPathInput,
  WorkflowResponse,
} from '../src/schemas/workflow.schema.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Workflows']
const path = '/api/v1/workflows/{workflow_uuid}'

export const workflowsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/workflows', tags, summary: 'Workflows the caller may list', protect: true } })
    .input(ListWorkflowsInput)
    .output(WorkflowList)
    .query(({ ctx, input }) => workflows.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/workflows', tags, summary: 'Create a workflow', protect: true }, successStatus: 201 })
    .input(CreateWorkflowInput)
    .output(WorkflowResponse)
    .mutation(({ ctx, input }) => workflows.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path, tags, summary: 'Retrieve a workflow', protect: true } })
    .input(WorkflowPathInput)
    .output(WorkflowResponse)
    .query(({ ctx, input }) => workflows.retrieve(ctx, input.workflow_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path, tags, summary: 'Update a workflow (write permission)', protect: true } })
    .input(UpdateWorkflowInput)
    .output(WorkflowResponse)
    .mutation(({ ctx, input }) => workflows.update(ctx, input)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path, tags, summary: 'Delete a workflow (admin permission)', protect: true }, successStatus: 204 })
    .input(WorkflowPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => workflows.remove(ctx, input.workflow_uuid)),

  favorite: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${path}/favorite`, tags, summary: "Add a workflow to the caller's favourites", protect: true },
      successStatus: 204,
    })
    .input(WorkflowPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => workflows.favorite(ctx, input.workflow_uuid)),

  unfavorite: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: `${path}/favorite`, tags, summary: "Remove a workflow from the caller's favourites", protect: true },
      successStatus: 204,
    })
    .input(WorkflowPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => workflows.unfavorite(ctx, input.workflow_uuid)),
})
