/**
 * The leaderboard's arithmetic and order as pure functions (docs/api/generate-and-leaderboard.md,
 * "The agent leaderboard"). The statement of ./leaderboard.query.ts computes the same in SQL so
 * that it can rank and cut at `limit` in the database; test/agents-leaderboard.test.ts holds the
 * two to the same answers over a world of known runs.
 */

/** The formula as `meta.formula` names it. */
export const LEADERBOARD_FORMULA = 'succeeded_runs * (1 + ln(users))'

/**
 * Rounds a non-negative value to 4 decimals, halves up: `floor(value × 10000 + 0.5) / 10000` in
 * double precision, the very operations the SQL performs on `float8`, so both give the same number.
 */
export const round4 = (value: number): number => Math.floor(value * 10_000 + 0.5) / 10_000

/**
 * `succeeded_runs × (1 + ln(users))` rounded to 4 decimals. `users` below 1 (every runner's
 * account deleted) counts as 1, so the score stays `succeeded_runs`.
 */
export function leaderboardScore(succeededRuns: number, users: number): number {
  return round4(succeededRuns * (1 + Math.log(Math.max(users, 1))))
}

/** `succeeded_runs / runs` rounded to 4 decimals (a fraction, 0..1); 0 without runs. */
export function successRate(succeededRuns: number, runs: number): number {
  return runs > 0 ? round4(succeededRuns / runs) : 0
}

/** What the order reads of an entry. */
export interface Ranked {
  score: number
  success_rate: number
  /** ISO 8601 instant. */
  last_used_at: string
  agent: { name: string; uuid: string }
}

/** Code point order (PostgreSQL's `collate "C"` on UTF-8 text): the UTF-8 bytes compared. */
const byCodePoint = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))

/**
 * The leaderboard's order: the higher score first; on a tie the higher success rate, then the
 * later `last_used_at`, then the name (code point order), then the uuid, so that no two agents tie.
 */
export function compareEntries(a: Ranked, b: Ranked): number {
  if (a.score !== b.score) return b.score - a.score
  if (a.success_rate !== b.success_rate) return b.success_rate - a.success_rate
  const lastA = Date.parse(a.last_used_at)
  const lastB = Date.parse(b.last_used_at)
  if (lastA !== lastB) return lastB - lastA
  return byCodePoint(a.agent.name, b.agent.name) || byCodePoint(a.agent.uuid, b.agent.uuid)
}
