/**
 * Messages (docs/api/resources.md, "Messages"): the messages of the caller's threads. `POST` adds a
 * message without running the model (`POST /api/v1/threads/{uuid}/run` runs it).
 */
import { z } from 'zod'
import { messages } from '../src/threads/index.ts'
import { CreateMessageInput, Message, MessageEnvelope, MessageListInput, MessagePathInput, UpdateMessageInput } from '../src/threads/index.ts'
import { paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Messages']

export const messagesRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/messages', tags, summary: 'Messages of one of your threads, oldest first', protect: true } })
    .input(MessageListInput)
    .output(paginated(Message))
    .query(({ ctx, input }) => messages.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/messages', tags, summary: 'Add a message to a thread (no model run)', protect: true }, successStatus: 201 })
    .input(CreateMessageInput)
    .output(MessageEnvelope)
    .mutation(({ ctx, input }) => messages.create(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/messages/{message_uuid}', tags, summary: 'Retrieve a message', protect: true } })
    .input(MessagePathInput)
    .output(MessageEnvelope)
    .query(({ ctx, input }) => messages.retrieve(ctx, input.message_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/messages/{message_uuid}', tags, summary: "Edit a message's content", protect: true } })
    .input(UpdateMessageInput)
    .output(MessageEnvelope)
    .mutation(({ ctx, input }) => messages.update(ctx, input)),

  delete: workspaceProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/messages/{message_uuid}', tags, summary: 'Delete a message', protect: true },
      successStatus: 204,
    })
    .input(MessagePathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => messages.remove(ctx, input.message_uuid)),
})
