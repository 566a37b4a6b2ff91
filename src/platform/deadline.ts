/** Deadlines on work that is watched, not stopped (a probe's query, a scrape's count). */

/**
 * Settles as `work` does, or rejects after `ms` milliseconds with `no answer within <ms> ms` (the
 * work goes on, unwatched).
 */
export function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}
