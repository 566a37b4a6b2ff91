/**
 * `job_queue_depth{job}` (docs/operations.md, "Metrics"): the jobs waiting in the durable queue,
 * per registered job name, asked of pg-boss when `GET /metrics` is scraped
 * ({@link JobQueue.waiting}). A scrape never starts pg-boss and never fails for it: a queue that
 * has not started in this process, a database that does not answer within
 * {@link QUEUE_DEPTH_DEADLINE_MS}, and the family reports nothing for that queue.
 */
import { within } from './deadline.ts'
import { gauge } from './prometheus.ts'
import type { JobQueue } from './queue.ts'

/** Milliseconds a scrape waits for the queue's counts before it goes on without them. */
export const QUEUE_DEPTH_DEADLINE_MS = 1_000

/**
 * The queues of this process's runtimes (one in a service process; a test process may start
 * several), held weakly so that a closed runtime is not kept alive by its metric.
 */
const watched = new Set<WeakRef<Pick<JobQueue, 'waiting'>>>()

gauge({
  name: 'job_queue_depth',
  help: 'Jobs waiting in the durable queue (queued, or waiting for a retry), by job name, as pg-boss last counted them',
  labelNames: ['job'],
  async collect() {
    const depths = new Map<string, number>()
    for (const ref of watched) {
      const jobs = ref.deref()
      if (!jobs) {
        watched.delete(ref)
        continue
      }
      const waiting = await within(jobs.waiting(), QUEUE_DEPTH_DEADLINE_MS).catch(() => null)
      for (const [job, count] of waiting ?? []) depths.set(job, (depths.get(job) ?? 0) + count)
    }
    // Set at once after every await, so two scrapes at the same moment never add to each other.
    this.reset()
    for (const [job, count] of depths) this.set({ job }, count)
  },
})

/**
 * Reports the waiting jobs of `jobs` in `job_queue_depth` from now on (the runtime calls it once
 * per queue); answers how to stop (a closed queue need not: it reports nothing, and is let go
 * once unreachable).
 */
export function watchQueueDepth(jobs: Pick<JobQueue, 'waiting'>): () => void {
  const ref = new WeakRef(jobs)
  watched.add(ref)
  return () => void watched.delete(ref)
}
