/**
 * An open-loop sampler of one API read during background work (the command room and evaluations
 * benchmarks): a request every 1/rate s whether or not the earlier ones were answered.
 */
import { setTimeout as sleep } from 'node:timers/promises'

/** One answered (or failed) API request of the sampler. */
export interface Sample {
  /** When it was sent (epoch ms). */
  at: number
  ms: number
  ok: boolean
}

/** Sends `GET url` every 1/rate s until stopped, recording each answer's latency. */
export function startSampler(url: string, token: string, rate: number): { stop: () => Promise<Sample[]> } {
  const samples: Sample[] = []
  const pending = new Set<Promise<void>>()
  const interval = 1000 / rate
  let stopped = false
  const loop = (async () => {
    let next = performance.now()
    while (!stopped) {
      const at = Date.now()
      const start = performance.now()
      const request = fetch(url, { headers: { authorization: `Bearer ${token}` } })
        .then(async (response) => {
          await response.arrayBuffer()
          samples.push({ at, ms: performance.now() - start, ok: response.ok })
        })
        .catch(() => void samples.push({ at, ms: performance.now() - start, ok: false }))
        .finally(() => pending.delete(request))
      pending.add(request)
      next += interval
      await sleep(Math.max(0, next - performance.now()))
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await loop
      await Promise.all(pending)
      return samples
    },
  }
}
