/**
 * Ending runs from outside their executor (docs/api/runs.md, "Cancelling", "Busy threads"): a
 * cancel, a newer message that interrupts a thread, or a resumed run that can no longer go on.
 *
 * A `running` run has an executor somewhere, which writes its final event when told to stop: here
 * it is only marked ended, and its process is told through the bus (the executor then logs
 * `run.canceled` with the error stored here). A `queued` or `awaiting_approval` run has no
 * executor: the same statement that ends it writes its final event and cancels its pending
 * approvals, and the event is published here.
 */
import type { Em } from '../platform/db.ts'
import { jsonValueOf } from '../access/wire.ts'
import type { RunBus } from './run-bus.ts'

/**
 * Whether a statement failed on the unique index that allows one active (running or waiting) run
 * per thread: another run of the thread took it first.
 */
export function isActiveRunConflict(error: unknown): boolean {
  const text = `${String((error as { constraint?: unknown } | null)?.constraint ?? '')} ${error instanceof Error ? error.message : ''}`
  return text.includes('runs_thread_active_index')
}

/** A run {@link endRuns} ended: its id, thread and what it was doing. */
export interface EndedRun {
  id: number
  threadId: number | null
  /** Its status before: `running` runs are stopped by their executor (module comment). */
  was: 'queued' | 'running' | 'awaiting_approval'
}

/**
 * Ends every unfinished run matching `where` (SQL over `runs`, with `params`) with `status` and
 * `error`, in one statement (module comment), and publishes the final events it wrote. With
 * `o.executorless`, a `running` run has no executor either (one claimed here that could not start)
 * and gets its final event here too.
 * @returns the runs it ended; the caller tells the processes of the `running` ones (`RunsPort.cancel`).
 */
export async function endRuns(
  em: Em,
  bus: Pick<RunBus, 'publish'>,
  where: { sql: string; params: unknown[] },
  status: 'canceled' | 'failed',
  error: { code: string; message: string },
  o: { executorless?: boolean } = {},
): Promise<EndedRun[]> {
  const errorJson = JSON.stringify(error)
  const finalType = status === 'canceled' ? 'run.canceled' : 'run.failed'
  const rows = await em.execute<{ id: number; thread_id: number | null; was: EndedRun['was']; seq: number | null; data: unknown; created_at: string | null }[]>(
    `with target as (
       select id, status as was from runs where (${where.sql}) and status in ('queued', 'running', 'awaiting_approval') order by id for update),
     ended as (
       update runs r set status = ?, error = ?::jsonb, finished_at = now(), updated_at = now(),
         events_count = r.events_count + (t.was <> 'running' or ?::boolean)::int
       from target t where r.id = t.id
       returning r.id, r.uuid, r.thread_id, r.events_count, t.was),
     logged as (
       insert into run_events (run_id, seq, type, data, created_at)
       select e.id, e.events_count, ?, jsonb_build_object('run_uuid', e.uuid, 'error', ?::jsonb), now() from ended e where e.was <> 'running' or ?::boolean
       returning run_id, seq, data, created_at),
     dropped as (
       update run_approvals set status = 'canceled', reason = ?, decided_at = now(), updated_at = now()
       where status = 'pending' and run_id in (select id from ended))
     select e.id::float8 as id, e.thread_id::float8 as thread_id, e.was, l.seq, l.data, l.created_at
     from ended e left join logged l on l.run_id = e.id`,
    [...where.params, status, errorJson, o.executorless === true, finalType, errorJson, o.executorless === true, error.code],
  )
  for (const row of rows) {
    if (row.seq === null || row.created_at === null) continue
    const event = { seq: Number(row.seq), type: finalType, data: jsonValueOf(row.data), created_at: new Date(row.created_at).toISOString() }
    bus.publish(Number(row.id), [event])
  }
  return rows.map((row) => ({ id: Number(row.id), threadId: row.thread_id === null ? null : Number(row.thread_id), was: row.was }))
}
