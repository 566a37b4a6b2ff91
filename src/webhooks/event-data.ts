/**
 * The `data` of the events the database triggers record (docs/api/webhooks.md, "Payload"): the
 * resource the event announces, as the `data` member of its retrieve answer holds it, read when
 * the event is dispatched (normally well within a second of the change) through the same service
 * a request would use, as the user the event names (the run's user, the execution's, the
 * document's, the task's owner, the workspace owner for budgets).
 */
import { actingContext } from '../access/acting-context.ts'
import type { ResourceCtx, ServiceDeps } from '../context.ts'
import { NotFoundError } from '../platform/errors.ts'
import { approvals, runs } from '../runs/index.ts'
import { executions } from '../workflows/index.ts'
import { knowledge } from '../knowledge/index.ts'
import { commandRoom } from '../command-room/index.ts'
import { budgets } from '../usage/index.ts'
import { evaluations } from '../evaluations/index.ts'

/** An event as the outbox holds it. */
export interface OutboxRow {
  id: number
  uuid: string
  type: string
  workspaceId: number
  workspaceUuid: string
  /** The payload `data` recorded with the event (agent versions), or what the trigger added to the subject (budget alerts). */
  data: Record<string, unknown> | null
  subjectUuid: string | null
  actorId: number | null
  createdAt: Date | string
}

/**
 * Answers an event's payload `data`, or null when the resource is gone (deleted since, or its
 * user no longer a member): such an event is not sent.
 * @throws what the database throws (the event is then dispatched at a later look).
 */
export type EventDataReader = (event: OutboxRow) => Promise<Record<string, unknown> | null>

type Read = (ctx: ResourceCtx, uuid: string, recorded: Record<string, unknown>) => Promise<Record<string, unknown>>

/** How each type's subject is read. */
const READERS: Record<string, Read> = {
  run: async (ctx, uuid) => (await runs.retrieve(ctx, uuid)).data.run,
  'run.approval_requested': async (ctx, uuid) => approvals.retrieve(ctx, uuid),
  workflow_execution: async (ctx, uuid) => (await executions.retrieve(ctx, uuid)).data,
  knowledge_document: async (ctx, uuid) => (await knowledge.retrieveDocument(ctx, uuid)).data,
  command_room_firing: async (ctx, uuid) => (await commandRoom.firing(ctx, uuid)).data,
  budget: async (ctx, uuid, recorded) => ({ budget: (await budgets.retrieve(ctx, uuid)).data, ...recorded }),
  evaluation: async (ctx, uuid) => (await evaluations.retrieve(ctx, uuid)).data,
}

const readerOf = (type: string): Read | undefined => READERS[type] ?? READERS[type.slice(0, type.indexOf('.'))]

/** The reader of the runtime's services (src/app.ts binds it to the engine). */
export function createEventDataReader(deps: ServiceDeps): EventDataReader {
  return async (event) => {
    if (!event.subjectUuid) return event.data
    const read = readerOf(event.type)
    if (!read || event.actorId === null) return null
    try {
      const ctx = await actingContext(deps, event.actorId, event.workspaceId)
      return await read(ctx, event.subjectUuid, event.data ?? {})
    } catch (error) {
      if (error instanceof NotFoundError) return null
      throw error
    }
  }
}
