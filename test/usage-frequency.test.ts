/**
 * `usage_frequency` (src/agents/agent.schema.ts; docs/api/resources.md): a pure function of the
 * runs of the last 30 days and `last_used_at`.
 */
import { describe, expect, it } from 'vitest'
import { USAGE_FREQUENCIES, usageFrequency } from '../src/agents/agent.schema.ts'

describe('usageFrequency', () => {
  it('is `never` for an agent that was never used, `rarely` for one used before but not in the last 30 days', () => {
    expect(usageFrequency(0, null)).toBe('never')
    expect(usageFrequency(0, undefined)).toBe('never')
    expect(usageFrequency(0, new Date('2020-01-01T00:00:00Z'))).toBe('rarely')
    expect(usageFrequency(0, '2026-01-02 03:04:05+00')).toBe('rarely')
  })

  it('buckets the runs of the window at the documented bounds: 1 monthly, 4 weekly, 30 daily, 720 hourly', () => {
    const used = new Date()
    const cases: [number, string][] = [
      [1, 'monthly'],
      [3, 'monthly'],
      [4, 'weekly'],
      [29, 'weekly'],
      [30, 'daily'],
      [719, 'daily'],
      [720, 'hourly'],
      [1_000_000, 'hourly'],
    ]
    for (const [runs, expected] of cases) expect(usageFrequency(runs, used), `${runs} runs`).toBe(expected)
  })

  it('counts runs even when last_used_at is missing, and reads nonsense counts as none', () => {
    expect(usageFrequency(30, null)).toBe('daily')
    expect(usageFrequency(-5, null)).toBe('never')
    expect(usageFrequency(Number.NaN, new Date())).toBe('rarely')
    expect(usageFrequency(Number.POSITIVE_INFINITY, null)).toBe('never')
  })

  it('answers only the documented values, most frequent first', () => {
    expect(USAGE_FREQUENCIES).toEqual(['hourly', 'daily', 'weekly', 'monthly', 'rarely', 'never'])
    for (const runs of [0, 1, 4, 30, 720]) expect(USAGE_FREQUENCIES).toContain(usageFrequency(runs, null))
  })
})
