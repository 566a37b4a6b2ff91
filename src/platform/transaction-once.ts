/**
 * A transaction that takes effect once though its commit's answer may be lost (docs/operations.md,
 * "Database deadlines"): background work that must not do its writes twice, and may not give up
 * on them either, because nobody would retry it (a node's change of static data, a claim of a
 * queued execution or a firing, a batch of due times recorded).
 */
import { DATABASE_RETRY_MS, writeOnce, type Em, type Orm } from './db.ts'
import { databaseUnavailable } from './errors.ts'

/** One try of {@link transactionOnce}: its transaction id once known, and what `work` answered. */
interface Attempt<T> {
  xid?: string
  answer?: { value: T }
}

/**
 * Runs `work` in a transaction on a new EntityManager of `orm` and answers what it answered. The
 * transaction first takes its id (`txid_current()`). When the connection is lost (any statement,
 * or the commit, fails with an error `databaseUnavailable` recognises), PostgreSQL is asked on a
 * new connection whether that transaction committed (`txid_status`, PGlite has it too), through
 * {@link writeOnce}:
 * - committed: the answer is what `work` computed inside it (the commit's answer was all that was
 *   lost);
 * - aborted, or lost before the id was known: `work` runs again in a new transaction, over the
 *   data as it is then;
 * - still in progress (the server has not yet noticed the dead client): asked again after the
 *   next pause.
 * So `work`'s writes take effect once, and `work` may run more than once: it must be a pure
 * function of what it reads in its transaction (no effects outside the database).
 * @param forMs how long to keep trying, in milliseconds (default {@link DATABASE_RETRY_MS}).
 * @throws what `work` throws (not retried unless it is a lost connection); the last lost
 *   connection's error once `forMs` has passed.
 */
export async function transactionOnce<T>(orm: Orm, work: (em: Em) => Promise<T>, forMs = DATABASE_RETRY_MS): Promise<T> {
  let attempt: Attempt<T> = {}
  let lastLoss: unknown
  const answer = await writeOnce(
    async () => {
      const current: Attempt<T> = (attempt = {})
      try {
        return await orm.em.fork().transactional(async (em) => {
          const [row] = await em.execute<{ xid: string }[]>('select txid_current()::text as xid')
          current.xid = String(row.xid)
          current.answer = { value: await work(em) }
          return current.answer
        })
      } catch (error) {
        if (databaseUnavailable(error)) lastLoss = error
        throw error
      }
    },
    async () => {
      const { xid, answer: computed } = attempt
      if (xid === undefined) return undefined
      const [row] = await orm.em.fork().execute<{ status: string | null }[]>('select txid_status(?::bigint) as status', [xid])
      if (row?.status === 'in progress') throw lastLoss
      if (row?.status !== 'committed') return undefined
      // A transaction commits only after `work` answered.
      if (!computed) throw new Error(`Transaction ${xid} committed without an answer`)
      return computed
    },
    forMs,
  )
  return answer.value
}
