/**
 * src/trpc/in-flight.ts: shutdown waits for procedure calls still running (their clients may
 * have left) before it closes the database.
 */
import { describe, expect, it } from 'vitest'
import { InFlight } from '../src/trpc/in-flight.ts'
import { createTestApp } from './helpers/app.ts'

describe('InFlight', () => {
  it('is idle at once when no call runs', async () => {
    const calls = new InFlight()
    const started = Date.now()
    await calls.idle(10_000)
    expect(Date.now() - started).toBeLessThan(1_000)
  })

  it('waits until the last running call leaves', async () => {
    const calls = new InFlight()
    calls.enter()
    calls.enter()
    let idle = false
    const waiting = calls.idle(10_000).then(() => (idle = true))
    calls.leave()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(idle).toBe(false)
    expect(calls.active).toBe(1)
    calls.leave()
    await waiting
    expect(idle).toBe(true)
  })

  it('gives up after the timeout when a call never ends', async () => {
    const calls = new InFlight()
    calls.enter()
    const started = Date.now()
    await calls.idle(50)
    expect(Date.now() - started).toBeGreaterThanOrEqual(45)
    expect(calls.active).toBe(1)
  })
})

describe('procedure calls are counted', () => {
  it('counts a call while it runs and releases it on success and on failure', async () => {
    const t = await createTestApp()
    try {
      const ada = await t.make.user()
      const inFlight = t.runtime.inFlight
      const enter = inFlight.enter.bind(inFlight)
      let peak = 0
      inFlight.enter = () => {
        enter()
        peak = Math.max(peak, inFlight.active)
      }
      await t.as(ada).user.me()
      expect(peak).toBe(1)
      expect(inFlight.active).toBe(0)
      await expect(t.caller({ authorization: 'Bearer wst_unknown-token-0123456789' }).user.me()).rejects.toThrow()
      expect(inFlight.active).toBe(0)
    } finally {
      await t.close()
    }
  })
})
