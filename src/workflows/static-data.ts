/**
 * A workflow's `static_data` changed by a node (docs/api/workflows.md, "Executions"): the node's
 * read, evaluation and write happen in one short transaction that holds the workflow row's lock,
 * against the value stored now, not the one the execution read when it started. So concurrent
 * executions of one workflow see each other's writes (a counter `=$static.n + 1` counts each of
 * them), while nothing else of an execution waits: only the nodes that change static data take
 * the lock, for as long as their own evaluation lasts, and executions that do not touch static data
 * run as before (their settles write no `workflows` row, see store.ts).
 *
 * The lock is `for no key update`, the lock an `update` of the row takes: it queues behind and
 * blocks other writers of the row (a `PUT` of the workflow, the `trigger_count` of an insert
 * batch, another node's write), not the inserts that reference it. On PGlite a transaction holds
 * the one connection, which serialises it the same way.
 *
 * A change is stored exactly once though the database connection is lost on the way
 * (docs/operations.md, "Database deadlines"): the transaction runs through `transactionOnce`
 * (src/platform/transaction-once.ts), which asks PostgreSQL whether it committed when its answer
 * was lost. Committed: the node gets what the transaction computed; not: the whole change (the
 * read, the node's evaluation, the write) runs again over the value stored then. So a counter
 * `=$static.n + 1` advances by one, never by none or two.
 */
import { queries, type Orm } from '../platform/db.ts'
import { transactionOnce } from '../platform/transaction-once.ts'
import type { Logger } from '../platform/logger.ts'
import { jsonRecordOf, storableJson } from '../access/wire.ts'
import { NodeError } from './types.ts'

/** What {@link changeStaticData} answers. */
export interface StaticDataChange<T> {
  /** What `change` answered. */
  value: T
  /** The workflow's `static_data` as stored once the transaction committed. */
  staticData: Record<string, unknown>
  /** Whether `change` altered it (else nothing was written). */
  changed: boolean
}

/** How a node changes static data, as the executor calls it (the engine binds it to {@link changeStaticData}). */
export type StaticDataChanger = <T>(
  workflowId: number,
  change: (staticData: Record<string, unknown>) => Promise<T>,
) => Promise<StaticDataChange<T>>

/** The change itself failed (as opposed to the database): its error goes on as it is. */
class ChangeFailed extends Error {
  constructor(readonly error: unknown) {
    super('The static data change failed')
  }
}

/**
 * Locks workflow `workflowId`'s row, reads its current `static_data`, runs `change` on it (a fresh
 * object `change` may alter), writes it back when `change` altered it, and commits, exactly once
 * (module comment: `change` runs again when a lost connection rolled the transaction back, so it
 * must have no effect besides altering the object). A throw from `change` rolls back and is
 * rethrown as it is.
 * @throws NodeError `not_found` (not retried) when the workflow row is gone; NodeError
 *   `static_data` when the database fails, or stays unreachable for `DATABASE_RETRY_MS` (logged
 *   on `log`).
 */
export async function changeStaticData<T>(
  orm: Orm,
  log: Logger,
  workflowId: number,
  change: (staticData: Record<string, unknown>) => Promise<T>,
): Promise<StaticDataChange<T>> {
  try {
    return await transactionOnce(orm, async (em) => {
      const row = await queries(em)
        .selectFrom('workflows')
        .select('static_data')
        .where('id', '=', workflowId)
        .forNoKeyUpdate()
        .executeTakeFirst()
      if (!row) throw new ChangeFailed(new NodeError('not_found', 'The workflow no longer exists', false))
      const staticData = jsonRecordOf(row.static_data)
      const before = storableJson(staticData)
      let value: T
      try {
        value = await change(staticData)
      } catch (error) {
        throw new ChangeFailed(error)
      }
      const after = storableJson(staticData)
      if (after === before) return { value, staticData, changed: false }
      // As stored: text PostgreSQL cannot hold was cleaned by storableJson.
      const stored = JSON.parse(after) as Record<string, unknown>
      await queries(em).updateTable('workflows').set({ static_data: stored }).where('id', '=', workflowId).execute()
      return { value, staticData: stored, changed: true }
    })
  } catch (error) {
    if (error instanceof ChangeFailed) throw error.error
    log.warn({ err: error, workflow_id: workflowId }, 'workflow static data could not be stored')
    throw new NodeError('static_data', "The workflow's static data could not be stored")
  }
}
