/**
 * Command room tasks (docs/api/command-room.md): agents and workflows that act on a schedule as
 * their owner. Store, list, retrieve, update, remove, fire now, and a task's firings.
 */
import { z } from 'zod'
import { commandRoom } from '../src/command-room/index.ts'
import { CommandRoomFiring, CommandRoomFiringEnvelope, CommandRoomFiringListInput, CommandRoomTask, CommandRoomTaskEnvelope, CommandRoomTaskListInput, CommandRoomTaskPathInput, StoreCommandRoomTaskInput, UpdateCommandRoomTaskInput } from '../src/command-room/index.ts'
import { paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Command room']
const tasksPath = '/api/v1/command-room/tasks'
const taskPath = `${tasksPath}/{task_uuid}`

export const commandRoomRouter = router({
  store: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: tasksPath, tags, summary: 'Store a task: an agent or a workflow acting once or on a schedule', protect: true }, successStatus: 201 })
    .input(StoreCommandRoomTaskInput)
    .output(CommandRoomTaskEnvelope)
    .mutation(({ ctx, input }) => commandRoom.store(ctx, input)),

  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: tasksPath, tags, summary: "The caller's tasks in the workspace, filtered and paginated", protect: true } })
    .input(CommandRoomTaskListInput)
    .output(paginated(CommandRoomTask))
    .query(({ ctx, input }) => commandRoom.list(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: taskPath, tags, summary: 'Retrieve one of your tasks', protect: true } })
    .input(CommandRoomTaskPathInput)
    .output(CommandRoomTaskEnvelope)
    .query(({ ctx, input }) => commandRoom.retrieve(ctx, input.task_uuid)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: taskPath, tags, summary: 'Update a task; is_active pauses and resumes it', protect: true } })
    .input(UpdateCommandRoomTaskInput)
    .output(CommandRoomTaskEnvelope)
    .mutation(({ ctx, input }) => commandRoom.update(ctx, input)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path: taskPath, tags, summary: 'Remove a task; its past runs and executions stay', protect: true }, successStatus: 204 })
    .input(CommandRoomTaskPathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => commandRoom.remove(ctx, input.task_uuid)),

  run: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: `${taskPath}/run`, tags, summary: 'Fire a task now', protect: true }, successStatus: 202 })
    .input(CommandRoomTaskPathInput)
    .output(CommandRoomFiringEnvelope)
    .mutation(({ ctx, input }) => commandRoom.runNow(ctx, input.task_uuid)),

  firings: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${taskPath}/firings`, tags, summary: "A task's firings, newest first", protect: true } })
    .input(CommandRoomFiringListInput)
    .output(paginated(CommandRoomFiring))
    .query(({ ctx, input }) => commandRoom.firings(ctx, input)),
})
