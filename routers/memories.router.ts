/**
 * Memories (docs/api/resources.md, "Memories"): what agent runs learned about the caller. Runs create
 * them; their owner lists, reads, edits and deletes them.
 */
import { z } from 'zod'
import { memories } from '../src/threads/index.ts'
import { Memory, MemoryEnvelope, MemoryListInput, MemoryPathInput, UpdateMemoryInput } from '../src/threads/index.ts'
import { paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Memories']

export const memoriesRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/memories', tags, summary: "The caller's memories in the workspace", protect: true } })
    .input(MemoryListInput)
    .output(paginated(Memory))
    .query(({ ctx, input }) => memories.list(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/memories/{memory_uuid}', tags, summary: 'Retrieve one of your memories', protect: true } })
    .input(MemoryPathInput)
    .output(MemoryEnvelope)
    .query(({ ctx, input }) => memories.retrieve(ctx, input.memory_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/memories/{memory_uuid}', tags, summary: "Edit a memory's content", protect: true } })
    .input(UpdateMemoryInput)
    .output(MemoryEnvelope)
    .mutation(({ ctx, input }) => memories.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/memories/{memory_uuid}', tags, summary: 'Delete one of your memories', protect: true },
      successStatus: 204,
    })
    .input(MemoryPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => memories.remove(ctx, input.memory_uuid)),
})
