/**
 * Large language models (docs/api/resources.md, "Large language models"): the catalog
 * a workspace sees, with `is_available` for the caller, and the workspace's custom models.
 */
import { z } from 'zod'
import { models } from '../src/models/index.ts'
import { CreateModelInput, LargeLanguageModel, ModelListInput, ModelPathInput, ModelRefInput, UpdateModelInput } from '../src/models/index.ts'
import { envelope, paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const ModelResponse = envelope(LargeLanguageModel)
const tags = ['Large language models']
const path = '/api/v1/large-language-models'

export const largeLanguageModelsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path, tags, summary: 'Models the workspace can use, built-in and custom', protect: true } })
    .input(ModelListInput)
    .output(paginated(LargeLanguageModel))
    .query(({ ctx, input }) => models.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path, tags, summary: 'Add a custom model to a custom llm provider', protect: true }, successStatus: 201 })
    .input(CreateModelInput)
    .output(ModelResponse)
    .mutation(({ ctx, input }) => models.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${path}/{model}`, tags, summary: 'Retrieve a model by uuid or slug', protect: true } })
    .input(ModelRefInput)
    .output(ModelResponse)
    .query(({ ctx, input }) => models.retrieve(ctx, input.model)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: `${path}/{model_uuid}`, tags, summary: 'Update a custom model', protect: true } })
    .input(UpdateModelInput)
    .output(ModelResponse)
    .mutation(({ ctx, input }) => models.update(ctx, input)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path: `${path}/{model_uuid}`, tags, summary: 'Delete a custom model', protect: true }, successStatus: 204 })
    .input(ModelPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => models.remove(ctx, input.model_uuid)),
})
