/**
 * `usage_frequency` of an agent (specification: "Agent"; docs/api/resources.md: "derived from the runs
 * of the last 30 days"), as a pure function so it is unit-tested and every response agrees.
 *
 * | runs in the last 30 days | value     | reading                                   |
 * |--------------------------|-----------|-------------------------------------------|
 * | >= 720                   | `hourly`  | on average at least one run an hour       |
 * | >= 30                    | `daily`   | on average at least one run a day         |
 * | >= 4                     | `weekly`  | on average about one run a week or more   |
 * | >= 1                     | `monthly` | at least one run in the window            |
 * | 0, `last_used_at` set    | `rarely`  | used before, not in the last 30 days      |
 * | 0, never used            | `never`   |                                           |
 */

/** Every value `usage_frequency` takes, most frequent first. */
export const USAGE_FREQUENCIES = ['hourly', 'daily', 'weekly', 'monthly', 'rarely', 'never'] as const
export type UsageFrequency = (typeof USAGE_FREQUENCIES)[number]

/** Days the frequency looks back over. */
export const USAGE_WINDOW_DAYS = 30

/** Lower bounds of runs in the window for each frequency, most frequent first. */
const THRESHOLDS: [number, UsageFrequency][] = [
  [USAGE_WINDOW_DAYS * 24, 'hourly'],
  [USAGE_WINDOW_DAYS, 'daily'],
  [4, 'weekly'],
  [1, 'monthly'],
]

/**
 * The frequency bucket of an agent.
 * @param runsInWindow runs of the agent in the last {@link USAGE_WINDOW_DAYS} days (negative or
 *   non-finite counts are read as 0).
 * @param lastUsedAt the agent's `last_used_at`: decides between `rarely` and `never` when the
 *   window holds no run.
 */
export function usageFrequency(runsInWindow: number, lastUsedAt: Date | string | null | undefined): UsageFrequency {
  const runs = Number.isFinite(runsInWindow) && runsInWindow > 0 ? runsInWindow : 0
  for (const [atLeast, frequency] of THRESHOLDS) if (runs >= atLeast) return frequency
  return lastUsedAt ? 'rarely' : 'never'
}
