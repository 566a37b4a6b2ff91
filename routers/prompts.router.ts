/**
 * Prompts (specification: "Prompt (response shape)", "Update a Prompt"; docs/api/resources.md):
 * reusable prompt templates with declared inputs.
 */
import { z } from 'zod'
import { prompts } from '../src/prompts/index.ts'
import { CreatePromptInput, DeletePromptInput, ListPromptsInput, PromptList, PromptResponse, RetrievePromptInput, UpdatePromptInput } from '../src/prompts/index.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Prompts']

export const promptsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/prompts', tags, summary: 'Prompts the caller may see in the workspace', protect: true } })
    .input(ListPromptsInput)
    .output(PromptList)
    .query(({ ctx, input }) => prompts.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/prompts', tags, summary: 'Create a prompt', protect: true }, successStatus: 201 })
    .input(CreatePromptInput)
    .output(PromptResponse)
    .mutation(({ ctx, input }) => prompts.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/prompts/{prompt_uuid}', tags, summary: 'Retrieve a prompt', protect: true } })
    .input(RetrievePromptInput)
    .output(PromptResponse)
    .query(({ ctx, input }) => prompts.retrieve(ctx, input.prompt_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/prompts/{prompt_uuid}', tags, summary: 'Update a prompt (write permission)', protect: true } })
    .input(UpdatePromptInput)
    .output(PromptResponse)
    .mutation(({ ctx, input }) => prompts.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/prompts/{prompt_uuid}', tags, summary: 'Delete a prompt (admin permission)', protect: true },
      successStatus: 204,
    })
    .input(DeletePromptInput)
    .output(z.void())
    .mutation(({ ctx, input }) => prompts.remove(ctx, input.prompt_uuid)),
})
