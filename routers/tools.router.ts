/**
 * Tools (docs/api/resources.md, "Tools"): operations an agent can call; `type` `api` is an HTTP
 * request (method, URL template, JSON-schema input) to an optional provider of type `tool`.
 */
import { z } from 'zod'
import { tools } from '../src/catalog/index.ts'
import { CreateToolInput, Tool, ToolListInput, ToolPathInput, UpdateToolInput } from '../src/catalog/index.ts'
import { envelope, paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const ToolResponse = envelope(Tool)
const tags = ['Tools']

export const toolsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/tools', tags, summary: 'Tools the caller may see in the workspace', protect: true } })
    .input(ToolListInput)
    .output(paginated(Tool))
    .query(({ ctx, input }) => tools.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/tools', tags, summary: 'Create a tool', protect: true }, successStatus: 201 })
    .input(CreateToolInput)
    .output(ToolResponse)
    .mutation(({ ctx, input }) => tools.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/tools/{tool_uuid}', tags, summary: 'Retrieve a tool', protect: true } })
    .input(ToolPathInput)
    .output(ToolResponse)
    .query(({ ctx, input }) => tools.retrieve(ctx, input.tool_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/tools/{tool_uuid}', tags, summary: 'Update a tool (write permission)', protect: true } })
    .input(UpdateToolInput)
    .output(ToolResponse)
    .mutation(({ ctx, input }) => tools.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/tools/{tool_uuid}', tags, summary: 'Delete a tool (admin permission)', protect: true },
      successStatus: 204,
    })
    .input(ToolPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => tools.remove(ctx, input.tool_uuid)),
})
