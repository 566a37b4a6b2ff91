/**
 * Providers (docs/api/resources.md, "Providers"): services an LLM or a tool talks to; the built-ins
 * (openai, anthropic, openai-compatible, ollama, local) plus custom ones of a workspace.
 */
import { z } from 'zod'
import { providers } from '../src/catalog/index.ts'
import { CreateProviderInput, Provider, ProviderListInput, ProviderPathInput, UpdateProviderInput } from '../src/catalog/index.ts'
import { envelope, paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const ProviderResponse = envelope(Provider)
const tags = ['Providers']

export const providersRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/providers', tags, summary: 'Built-in providers and those the caller may see in the workspace', protect: true } })
    .input(ProviderListInput)
    .output(paginated(Provider))
    .query(({ ctx, input }) => providers.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/providers', tags, summary: 'Create a custom provider', protect: true }, successStatus: 201 })
    .input(CreateProviderInput)
    .output(ProviderResponse)
    .mutation(({ ctx, input }) => providers.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/providers/{provider_uuid}', tags, summary: 'Retrieve a provider', protect: true } })
    .input(ProviderPathInput)
    .output(ProviderResponse)
    .query(({ ctx, input }) => providers.retrieve(ctx, input.provider_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/providers/{provider_uuid}', tags, summary: 'Update a custom provider (write permission)', protect: true } })
    .input(UpdateProviderInput)
    .output(ProviderResponse)
    .mutation(({ ctx, input }) => providers.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/providers/{provider_uuid}', tags, summary: 'Delete a custom provider (admin permission)', protect: true },
      successStatus: 204,
    })
    .input(ProviderPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => providers.remove(ctx, input.provider_uuid)),
})
