/**
 * `GET /api/v1/agents/leaderboard` (docs/api/generate-and-leaderboard.md, "The agent
 * leaderboard"): agents ranked by their agent and thread runs of a period, in one statement
 * (./leaderboard.query.ts). Scope `workspace` is the agents list's rule (the agents the caller
 * may see in the workspace context, src/access/resource-access.ts `listScopeSql`); scope `public`
 * is every public agent of the service scope, as the list's `visibility=public`. Every run of a
 * ranked agent counts, whoever ran it and in whichever workspace. The answer is cached by the
 * procedure (src/trpc/cache.ts).
 */
import { listScopeSql } from '../access/resource-access.ts'
import type { ResourceCtx } from '../context.ts'
import { executeParameterised } from '../platform/db.ts'
import type { ProfilePhotoConfigValue, Visibility } from '../../entities/index.ts'
import type { LeaderboardPeriod, TLeaderboardEntry, TLeaderboardInput, TLeaderboardResponse } from './leaderboard.schema.ts'
import { toProfilePhotoConfig } from '../access/resource.schema.ts'
import { iso } from '../access/wire.ts'
import { mediaUrl } from '../access/user-workspace.schema.ts'
import { LEADERBOARD_FORMULA } from './leaderboard.score.ts'
import { leaderboardStatement } from './leaderboard.query.ts'
import { nowMicros } from '../metrics/index.ts'

const HOUR_MS = 3_600_000

/** How far back each period reaches; `all` has no bound. */
const PERIOD_MS: Record<LeaderboardPeriod, number | null> = {
  day: 24 * HOUR_MS,
  week: 7 * 24 * HOUR_MS,
  month: 30 * 24 * HOUR_MS,
  all: null,
}

/** The first instant of `period` ending at `now` (runs created at or after it count); null for `all`. */
export function periodStart(period: LeaderboardPeriod, now: number): Date | null {
  const span = PERIOD_MS[period]
  return span === null ? null : new Date(now - span)
}

/** A row of the statement as PostgreSQL or PGlite answers it. */
interface LeaderboardRow {
  uuid: string
  name: string
  description: string
  profilePhotoKey: string | null
  profilePhotoConfig: ProfilePhotoConfigValue | string | null
  visibility: Visibility
  isOwner: boolean
  runs: number
  succeeded: number
  users: number
  successRate: number
  avgLatencyMs: number | null
  totalTokens: number
  lastUsedAt: Date | string
  score: number
}

/** A jsonb column as read: parsed by `pg`, text on some PGlite paths. */
const photoConfigOf = (value: LeaderboardRow['profilePhotoConfig']): ProfilePhotoConfigValue | null =>
  typeof value === 'string' ? (JSON.parse(value) as ProfilePhotoConfigValue) : value

function toEntry(row: LeaderboardRow, rank: number, appUrl: string): TLeaderboardEntry {
  return {
    rank,
    agent: {
      uuid: row.uuid,
      name: row.name,
      description: row.description,
      profile_photo_url: mediaUrl(appUrl, row.profilePhotoKey),
      profile_photo_config: toProfilePhotoConfig(photoConfigOf(row.profilePhotoConfig)) ?? {},
      visibility: row.visibility,
      is_owner: row.isOwner === true,
    },
    runs: Number(row.runs),
    succeeded_runs: Number(row.succeeded),
    users: Number(row.users),
    success_rate: Number(row.successRate),
    avg_latency_ms: row.avgLatencyMs === null ? null : Number(row.avgLatencyMs),
    total_tokens: Number(row.totalTokens),
    last_used_at: iso(row.lastUsedAt),
    score: Number(row.score),
  }
}

/** The leaderboard of `input` for the caller in the request's workspace context. */
export async function leaderboard(ctx: ResourceCtx, input: TLeaderboardInput): Promise<TLeaderboardResponse> {
  const cachedAt = nowMicros()
  const scope = listScopeSql('a', 'agents', ctx, input.scope === 'public' ? 'public' : undefined)
  const statement = leaderboardStatement({
    scope,
    since: periodStart(input.period, Date.now()),
    viewerId: ctx.auth.user.id,
    limit: input.limit,
  })
  const rows = await executeParameterised(ctx.deps.orm, () => ctx.em, statement.sql, statement.params)
  return {
    data: rows.map((row, index) => toEntry(row as unknown as LeaderboardRow, index + 1, ctx.config.appUrl)),
    meta: { period: input.period, scope: input.scope, formula: LEADERBOARD_FORMULA, cached_at: cachedAt },
  }
}
