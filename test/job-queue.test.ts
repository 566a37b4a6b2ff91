/**
 * The generic job queue (src/platform/queue.ts) on its own, on the real pg-boss of the test
 * database: jobs sent in one insert, batches worked concurrently with each job completed or failed
 * on its own, and ids that deduplicate.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { JobQueue } from '../src/platform/queue.ts'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { until } from './helpers/processes.ts'

describe('job queue', () => {
  let t: TestApp
  let queue: JobQueue
  /** Times each job id was worked, and the most handlers seen at once. */
  const worked = new Map<string, number>()
  let running = 0
  let mostAtOnce = 0
  const failOnce = new Set<string>()

  beforeAll(async () => {
    t = await createTestApp()
    queue = new JobQueue(t.runtime.orm, t.config, t.runtime.log)
    queue.register<{ key: string }>(
      'test.batched',
      async ({ key }) => {
        running++
        mostAtOnce = Math.max(mostAtOnce, running)
        worked.set(key, (worked.get(key) ?? 0) + 1)
        await new Promise((resolve) => setTimeout(resolve, 100))
        running--
        if (failOnce.delete(key)) throw new Error(`${key} fails its first attempt`)
      },
      { retryLimit: 1, retryDelay: 0, localConcurrency: 1, batchSize: 10 },
    )
    await queue.work()
    await queue.start()
  })
  afterAll(async () => {
    await queue?.stop(1_000)
    await t?.close()
  })

  it('sends many jobs in one insert, works a batch concurrently, and skips an id sent again', async () => {
    const jobs = Array.from({ length: 25 }, (_, i) => ({ data: { key: `many-${i}` }, id: randomUUID() }))
    await queue.sendMany('test.batched', jobs)
    // The same ids again: nothing more is queued.
    await queue.sendMany('test.batched', jobs.slice(0, 5))
    await until(async () => jobs.every((job) => worked.get(job.data.key) === 1), Boolean, 30_000)
    // One fetcher, yet several handlers ran at once: the batch is worked concurrently.
    expect(mostAtOnce).toBeGreaterThan(1)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(jobs.map((job) => worked.get(job.data.key))).toEqual(jobs.map(() => 1))
  })

  it('fails and retries one job of a batch on its own; the others complete once', async () => {
    const jobs = Array.from({ length: 6 }, (_, i) => ({ data: { key: `retry-${i}` }, id: randomUUID() }))
    failOnce.add('retry-2')
    await queue.sendMany('test.batched', jobs)
    await until(async () => worked.get('retry-2') === 2, Boolean, 30_000)
    await until(async () => jobs.every((job) => (worked.get(job.data.key) ?? 0) >= 1), Boolean, 30_000)
    expect(jobs.map((job) => worked.get(job.data.key))).toEqual([1, 1, 2, 1, 1, 1])
    const boss = await queue.start()
    const states = () => Promise.all(jobs.map(async (job) => (await boss.findJobs('test.batched', { id: job.id }))[0]?.state))
    // The retry completes once its handler returned.
    expect(await until(states, (seen) => seen.every((state) => state === 'completed'), 10_000)).toEqual(jobs.map(() => 'completed'))
  })

  it('refuses a job nobody registered', async () => {
    await expect(queue.sendMany('test.unknown', [{ data: {} }])).rejects.toThrow(/No job named "test.unknown"/)
  })
})
