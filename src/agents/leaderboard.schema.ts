/**
 * `GET /api/v1/agents/leaderboard` (docs/api/generate-and-leaderboard.md, "The agent
 * leaderboard"): the query and the answer. The query's fixed sets are `z.enum`: the OpenAPI
 * generator describes query parameters from them (it cannot read a `z.literal` of several values).
 */
import { z } from 'zod'
import { ProfilePhotoConfig, Visibility } from '../access/resource.schema.ts'
import { timestamp } from '../access/wire.ts'

export const LEADERBOARD_PERIODS = ['day', 'week', 'month', 'all'] as const
export type LeaderboardPeriod = (typeof LEADERBOARD_PERIODS)[number]
export const LEADERBOARD_SCOPES = ['workspace', 'public'] as const
export type LeaderboardScope = (typeof LEADERBOARD_SCOPES)[number]

/** The query: `period` (default `week`), `scope` (default `workspace`), `limit` 1..100 (default 10), the workspace context. */
export const LeaderboardInput = z.strictObject({
  period: z.enum(LEADERBOARD_PERIODS).default('week'),
  scope: z.enum(LEADERBOARD_SCOPES).default('workspace'),
  limit: z.number().int().min(1).max(100).default(10),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TLeaderboardInput = z.infer<typeof LeaderboardInput>

/** The agent of an entry: who it is, not what it does (no instruction, metadata or relations). */
const LeaderboardAgent = z.object({
  uuid: z.uuid(),
  name: z.string(),
  description: z.string(),
  profile_photo_url: z.string().nullable(),
  profile_photo_config: ProfilePhotoConfig,
  visibility: Visibility,
  is_owner: z.boolean(),
})

/** One ranked agent and the figures of its runs in the period. */
export const LeaderboardEntry = z
  .object({
    rank: z.number().int(),
    agent: LeaderboardAgent,
    runs: z.number().int(),
    succeeded_runs: z.number().int(),
    users: z.number().int(),
    success_rate: z.number(),
    avg_latency_ms: z.number().nullable(),
    total_tokens: z.number().int(),
    last_used_at: timestamp(),
    score: z.number(),
  })
  .meta({ id: 'LeaderboardEntry' })
export type TLeaderboardEntry = z.infer<typeof LeaderboardEntry>

export const LeaderboardResponse = z.object({
  data: z.array(LeaderboardEntry),
  meta: z.object({
    period: z.enum(LEADERBOARD_PERIODS),
    scope: z.enum(LEADERBOARD_SCOPES),
    formula: z.string(),
    cached_at: z.string(),
  }),
})
export type TLeaderboardResponse = z.infer<typeof LeaderboardResponse>
