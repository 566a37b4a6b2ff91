/**
 * The event outbox (`outbox_events`; docs/api/versions.md, "Events"): an event is recorded by the
 * statement list of the transaction that makes the change it announces, so it exists exactly when
 * that change committed, whichever process made it, and is never recorded for a change that rolled
 * back. Outbound delivery reads it; recording knows nothing of who receives it.
 */
import { uuidv7 } from 'uuidv7'
import type { Em } from './db.ts'

/** An event to record: its type (`agent.version_created`), the workspace it belongs to and its payload `data`. */
export interface OutboxEventInput {
  type: string
  workspaceId: number
  data: Record<string, unknown>
}

/**
 * Records `event` with `em`, which must be the change's transaction for the guarantee above.
 * @returns the event's uuid (the payload's `id`).
 */
export async function recordEvent(em: Em, event: OutboxEventInput): Promise<string> {
  const uuid = uuidv7()
  // pg_notify is delivered when the transaction commits: the outbox's readers look at once (src/platform/notify.ts).
  await em.execute(
    `with recorded as (insert into outbox_events (uuid, type, workspace_id, data, created_at) values (?, ?, ?, ?::jsonb, now()) returning 1)
    select pg_notify('outbox_events', '') from recorded`,
    [uuid, event.type, event.workspaceId, JSON.stringify(event.data)],
  )
  return uuid
}
