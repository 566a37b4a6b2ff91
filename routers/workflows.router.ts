/** Workflows as stored resources (specification: "Workflow"; docs/api/resources.md and docs/api/workflows.md). */
import { z } from 'zod'
import { workflows } from '../src/workflows/index.ts'
import { generateWorkflow } from '../src/workflows/index.ts'
import { shareWorkflow } from '../src/workflows/index.ts'
import { workflowRuns } from '../src/workflows/index.ts'
import { WorkflowExecutionDetailResponse } from '../src/workflows/index.ts'
import { CreateWorkflowInput, GenerateWorkflowInput, ListWorkflowsInput, RunWorkflowInput, ShareWorkflowInput, UpdateWorkflowInput, WorkflowList, WorkflowPathInput, WorkflowResponse } from '../src/workflows/index.ts'
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

  // A static path: declared before every `{workflow_uuid}` procedure, so `generate` is never read as a uuid.
  generate: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/workflows/generate',
        tags,
        summary: "Generate a workflow from a description with a workspace's model",
        protect: true,
      },
      successStatus: 201,
      callsModel: true,
    })
    .input(GenerateWorkflowInput)
    .output(WorkflowResponse)
    // A client that disconnects stops the model call: nothing is stored (docs/api/generate-and-leaderboard.md).
    .mutation(({ ctx, input, signal }) => generateWorkflow(ctx, input, signal)),

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

  share: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${path}/share`, tags, summary: 'Share a workflow with a user or a workspace', protect: true },
    })
    .input(ShareWorkflowInput)
    .output(WorkflowResponse)
    .mutation(({ ctx, input }) => shareWorkflow(ctx, input)),

  run: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${path}/run`,
        tags,
        summary: 'Run a workflow by hand: 200 with the execution when it ended, or 202 at once with background: true',
        protect: true,
      },
      backgroundStatus: 202,
    })
    .input(RunWorkflowInput)
    .output(WorkflowExecutionDetailResponse)
    .mutation(async ({ ctx, input }) => {
      const result = await workflowRuns.run(ctx, input)
      if (input.background) ctx.successStatus = 202
      return result
    }),

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
