/**
 * Group commits: writes of one kind that arrive while earlier ones are in flight go to the
 * database together, as one statement and one commit (DataLoader batches them). Each caller still
 * waits for its own answer. Used by the workflow execution store (src/workflows/store.ts) and the
 * command room's claims and outcomes (src/command-room/engine.ts).
 */
import DataLoader from 'dataloader'
import { databaseUnavailable } from './errors.ts'

/**
 * A DataLoader that dispatches a batch (of `maxBatchSize` at most) as soon as fewer than
 * `inFlight` batches are in flight, so writes that arrive meanwhile wait and go together. A batch
 * whose statement fails is retried one write at a time, unless it failed because the database
 * connection was lost (`write` has run it again on new connections for as long as it could).
 */
export function groupCommit<K, V>(
  maxBatchSize: number,
  write: (keys: readonly K[]) => Promise<(V | Error)[]>,
  inFlight = 1,
): DataLoader<K, V> {
  let running = 0
  const waiting: (() => void)[] = []
  const run = async (keys: readonly K[]): Promise<(V | Error)[]> => {
    running++
    try {
      try {
        return await write(keys)
      } catch (error) {
        // A lost connection is no bad write: every write of the batch fails with it.
        if (keys.length === 1 || databaseUnavailable(error)) return keys.map(() => error as Error)
        const single: (V | Error)[] = []
        for (const key of keys) single.push(await write([key]).then((answer) => answer[0], (e: unknown) => e as Error))
        return single
      }
    } finally {
      running--
      waiting.shift()?.()
    }
  }
  return new DataLoader<K, V>(run, {
    cache: false,
    maxBatchSize,
    batchScheduleFn: (dispatch) => {
      if (running < inFlight) setImmediate(dispatch)
      else waiting.push(dispatch)
    },
  })
}
