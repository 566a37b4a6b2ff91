/**
 * Threads (docs/api/resources.md, "Threads"): private conversations of their creator with an agent,
 * in one workspace. Running a thread is in routers/runs.router.ts; naming one from its messages
 * (`generate-name`) calls the agent's model through src/threads/thread-names.service.ts.
 */
import { z } from 'zod'
import { threadNames } from '../src/threads/index.ts'
import { threads } from '../src/threads/index.ts'
import { CreateThreadInput, Thread, ThreadEnvelope, ThreadListInput, ThreadPathInput, UpdateThreadInput } from '../src/threads/index.ts'
import { paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Threads']

export const threadsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/threads', tags, summary: "The caller's threads in the workspace", protect: true } })
    .input(ThreadListInput)
    .output(paginated(Thread))
    .query(({ ctx, input }) => threads.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/threads', tags, summary: 'Start a thread with an agent', protect: true }, successStatus: 201 })
    .input(CreateThreadInput)
    .output(ThreadEnvelope)
    .mutation(({ ctx, input }) => threads.create(ctx, input)),

  generateName: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/threads/{thread_uuid}/generate-name', tags, summary: 'Name a thread from its first messages', protect: true },
      callsModel: true,
    })
    .input(ThreadPathInput)
    .output(ThreadEnvelope)
    .mutation(({ ctx, input }) => threadNames.generateName(ctx, input.thread_uuid)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/threads/{thread_uuid}', tags, summary: 'Retrieve one of your threads', protect: true } })
    .input(ThreadPathInput)
    .output(ThreadEnvelope)
    .query(({ ctx, input }) => threads.retrieve(ctx, input.thread_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/threads/{thread_uuid}', tags, summary: 'Rename a thread or change its metadata', protect: true } })
    .input(UpdateThreadInput)
    .output(ThreadEnvelope)
    .mutation(({ ctx, input }) => threads.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/threads/{thread_uuid}', tags, summary: 'Delete a thread and its messages', protect: true },
      successStatus: 204,
    })
    .input(ThreadPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => threads.remove(ctx, input.thread_uuid)),
})
