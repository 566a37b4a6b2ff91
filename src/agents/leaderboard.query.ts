/**
 * The one SQL statement of the agent leaderboard (docs/api/generate-and-leaderboard.md, "The agent
 * leaderboard"): the runs of the agents in scope created in the period, aggregated per agent;
 * scored, ordered and cut at `limit` in the database with the arithmetic and order of
 * ./leaderboard.score.ts (the same `float8` operations, rounding included, so the same numbers;
 * `last_used_at` compared to the millisecond the answer shows; names in code point order).
 *
 * Plan notes (docs/benchmarks.md, "Leaderboard benchmark"): the agents in scope drive in `id`
 * order, each reaching its runs of the period through `runs (agent_id, created_at)`, which
 * includes the columns aggregated here, so the runs are read index-only and arrive grouped by
 * agent: one streaming aggregate, whose `count(distinct user_id)` sorts only each agent's few
 * runners. Sums and the score run on `int`/`float8`, not `numeric`. The order by score, success
 * rate and last use keeps the first `limit` agents and their ties (`fetch first ... with ties`)
 * before the agents' own rows are joined for the names, so only those few rows are read and
 * sorted by name. Sent with real `$n` parameters (src/platform/db.ts, `executeParameterised`); a
 * period without a lower bound (`all`) is another statement text rather than a `-infinity` bound,
 * so each is planned for what it reads.
 */
import type { SqlFragment } from '../platform/sql.ts'

/** A built statement: its text (`?` placeholders) and parameters. */
export interface LeaderboardStatement {
  sql: string
  params: unknown[]
}

/** What the statement ranks. */
export interface LeaderboardQuery {
  /** The agents in scope, as a condition on alias `a` (src/access/resource-access.ts, `listScopeSql`). */
  scope: SqlFragment
  /** Runs created at or after this instant count; null: every run. */
  since: Date | null
  /** The caller, for `is_owner`. */
  viewerId: number
  limit: number
}

/** The statement of `query`: one row per ranked agent, best first, at most `limit`. */
export function leaderboardStatement(query: LeaderboardQuery): LeaderboardStatement {
  const period = query.since ? ' and r.created_at >= ?::timestamptz' : ''
  const sql = `with per_agent as (
      select r.agent_id, count(*)::int as runs,
        (count(*) filter (where r.status = 'succeeded'))::int as succeeded,
        count(distinct r.user_id)::int as users,
        (sum(r.latency_ms) filter (where r.status = 'succeeded'))::float8 as latency_sum,
        (count(r.latency_ms) filter (where r.status = 'succeeded'))::int as latency_count,
        sum(r.total_tokens)::float8 as tokens, date_trunc('milliseconds', max(r.created_at)) as last_used_at
      from agents a join runs r on r.agent_id = a.id
      where ${query.scope.sql} and r.evaluation_uuid is null${period}
      group by r.agent_id),
    scored as (
      select p.*,
        floor(p.succeeded * (1 + ln(greatest(p.users, 1)::float8)) * 10000 + 0.5) / 10000 as score,
        floor(p.succeeded::float8 / p.runs * 10000 + 0.5) / 10000 as success_rate,
        case when p.latency_count > 0 then floor(p.latency_sum / p.latency_count * 10000 + 0.5) / 10000 end as avg_latency
      from per_agent p),
    top as (
      select * from scored order by score desc, success_rate desc, last_used_at desc fetch first ? rows with ties)
    select a.uuid, a.name, a.description, a.profile_photo_key as "profilePhotoKey",
      a.profile_photo_config as "profilePhotoConfig", a.visibility, (a.user_id = ?) as "isOwner",
      s.runs::float8 as runs, s.succeeded::float8 as succeeded, s.users::float8 as users,
      s.success_rate as "successRate", s.avg_latency as "avgLatencyMs",
      s.tokens as "totalTokens", s.last_used_at as "lastUsedAt", s.score
    from top s join agents a on a.id = s.agent_id
    order by s.score desc, s.success_rate desc, s.last_used_at desc, a.name collate "C", a.uuid
    limit ?`
  return {
    sql,
    params: [...query.scope.params, ...(query.since ? [query.since.toISOString()] : []), query.limit, query.viewerId, query.limit],
  }
}
