/**
 * The agent leaderboard (docs/api/generate-and-leaderboard.md, "The agent leaderboard"): the pure
 * score and order; the ranks over a world of known runs, agreeing with the pure functions for
 * every period, scope and caller; each period's boundary; scopes; `limit`; each validation rule;
 * 401, another tenant's workspace (404), a plain member and a read-only token reading it; the
 * cache (same `cached_at` within the window, `Cache-Control: no-cache` recomputes); the static
 * path before `{agent_uuid}`.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LEADERBOARD_PERIODS, type LeaderboardPeriod, type TLeaderboardEntry } from '../src/agents/leaderboard.schema.ts'
import { periodStart } from '../src/agents/leaderboard.service.ts'
import { compareEntries, LEADERBOARD_FORMULA, leaderboardScore, round4, successRate } from '../src/agents/leaderboard.score.ts'
import { expectNamed, member, readOnlyToken, type Member } from './helpers/agents.ts'
import { createTestApp, type HttpResult, type TestApp } from './helpers/app.ts'
import { createIn, idOf } from './helpers/metrics.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR

describe('leaderboard score and order (pure)', () => {
  it('scores succeeded_runs × (1 + ln(users)), rounded to 4 decimals', () => {
    expect(leaderboardScore(3, 3)).toBe(6.2958) // 3 × 2.09861228866811 = 6.29583686600433
    expect(leaderboardScore(3, 2)).toBe(5.0794) // 3 × 1.69314718055995 = 5.07944154167984
    expect(leaderboardScore(1, 3)).toBe(2.0986)
    expect(leaderboardScore(7, 1)).toBe(7)
    expect(leaderboardScore(0, 5)).toBe(0)
    // No runner left (accounts deleted): ln is not taken of 0.
    expect(leaderboardScore(4, 0)).toBe(4)
  })

  it('rounds the success rate to 4 decimals, halves up', () => {
    expect(successRate(2, 3)).toBe(0.6667)
    expect(successRate(1, 3)).toBe(0.3333)
    expect(successRate(1, 32)).toBe(0.0313) // 0.03125
    expect(successRate(1, 8)).toBe(0.125)
    expect(successRate(0, 4)).toBe(0)
    expect(successRate(0, 0)).toBe(0)
    expect(round4(233.33333)).toBe(233.3333)
    expect(round4(0.00005)).toBe(0.0001)
  })

  it('orders by score, then success rate, then the later last use, then name, then uuid', () => {
    const entry = (score: number, rate: number, at: string, name: string, uuid = randomUUID()) => ({
      score,
      success_rate: rate,
      last_used_at: at,
      agent: { name, uuid },
    })
    const at = '2026-11-20T10:00:00.000Z'
    const later = '2026-11-20T10:00:00.001Z'
    const sorted = (...items: ReturnType<typeof entry>[]) => [...items].sort(compareEntries).map((item) => item.agent.name)
    expect(sorted(entry(2, 1, at, 'low'), entry(3, 0.5, at, 'high'))).toEqual(['high', 'low'])
    expect(sorted(entry(2, 0.5, later, 'worse rate'), entry(2, 1, at, 'better rate'))).toEqual(['better rate', 'worse rate'])
    expect(sorted(entry(2, 1, at, 'earlier'), entry(2, 1, later, 'later'))).toEqual(['later', 'earlier'])
    // Names in code point order: upper case before lower case, "é" after "z".
    expect(sorted(entry(2, 1, at, 'b'), entry(2, 1, at, 'é'), entry(2, 1, at, 'B'), entry(2, 1, at, 'z'))).toEqual(['B', 'b', 'z', 'é'])
    const same = [
      entry(2, 1, at, 'twin', 'ffffffff-0000-4000-8000-000000000000'),
      entry(2, 1, at, 'twin', '00000000-0000-4000-8000-000000000000'),
    ]
    expect([...same].sort(compareEntries).map((item) => item.agent.uuid)).toEqual([same[1]!.agent.uuid, same[0]!.agent.uuid])
  })

  it('each period starts 24 hours, 7 days or 30 days before now; all has no start', () => {
    const now = Date.parse('2026-11-25T12:00:00Z')
    expect(periodStart('day', now)?.toISOString()).toBe('2026-11-24T12:00:00.000Z')
    expect(periodStart('week', now)?.toISOString()).toBe('2026-11-18T12:00:00.000Z')
    expect(periodStart('month', now)?.toISOString()).toBe('2026-10-26T12:00:00.000Z')
    expect(periodStart('all', now)).toBeNull()
  })
})

/** One run of the world: whose agent, who ran it, how it ended, how long ago it was created. */
interface WorldRun {
  agent: string
  user: 'erin' | 'frank' | 'grace' | 'bob' | null
  status: 'succeeded' | 'failed' | 'canceled' | 'running'
  agoMs: number
  tokens?: [number, number]
  latencyMs?: number | null
  kind?: 'agent' | 'thread'
}

/** An agent of the world: who owns it, where, its visibility. */
interface WorldAgent {
  owner: 'erin' | 'frank' | 'bob'
  visibility: 'public' | 'private' | 'workspace'
  deleted?: boolean
  /** A `read` share to Erin. */
  sharedWithErin?: boolean
}

const AGENTS: Record<string, WorldAgent> = {
  'Public helper': { owner: 'erin', visibility: 'public' },
  'Erin private': { owner: 'erin', visibility: 'private' },
  'Frank workspace': { owner: 'frank', visibility: 'workspace' },
  'Bob public': { owner: 'bob', visibility: 'public' },
  'Bob private': { owner: 'bob', visibility: 'private' },
  'Bob shared': { owner: 'bob', visibility: 'private', sharedWithErin: true },
  'Old timer': { owner: 'erin', visibility: 'workspace' },
  'Deleted star': { owner: 'erin', visibility: 'workspace', deleted: true },
  'Tie later': { owner: 'erin', visibility: 'workspace' },
  'Tie b': { owner: 'erin', visibility: 'workspace' },
  'Tie a': { owner: 'erin', visibility: 'workspace' },
  'Rate high': { owner: 'erin', visibility: 'workspace' },
  'Rate low': { owner: 'erin', visibility: 'workspace' },
  Unused: { owner: 'erin', visibility: 'workspace' },
  'Filler 1': { owner: 'frank', visibility: 'workspace' },
  'Filler 2': { owner: 'frank', visibility: 'workspace' },
  'Filler 3': { owner: 'frank', visibility: 'workspace' },
}

/** Inside and outside each period's boundary by 10 minutes (the requests follow the seeding within that). */
const MARGIN = 10 * 60_000
const RUNS: WorldRun[] = [
  // Public helper: 3 runners within the day, one failure within the week.
  { agent: 'Public helper', user: 'erin', status: 'succeeded', agoMs: 1 * HOUR, tokens: [10, 5], latencyMs: 100 },
  { agent: 'Public helper', user: 'frank', status: 'succeeded', agoMs: 2 * HOUR, tokens: [20, 10], latencyMs: 200, kind: 'thread' },
  { agent: 'Public helper', user: 'grace', status: 'succeeded', agoMs: DAY - MARGIN, tokens: [30, 15], latencyMs: 400 },
  { agent: 'Public helper', user: 'erin', status: 'failed', agoMs: DAY + MARGIN, tokens: [7, 0], latencyMs: 9000 },
  // Erin private: one runner.
  { agent: 'Erin private', user: 'erin', status: 'succeeded', agoMs: 3 * HOUR, tokens: [1, 1], latencyMs: 50 },
  { agent: 'Erin private', user: 'erin', status: 'succeeded', agoMs: 4 * HOUR, tokens: [1, 1], latencyMs: null },
  // Frank workspace: within the week, at its boundary.
  { agent: 'Frank workspace', user: 'frank', status: 'succeeded', agoMs: 7 * DAY - MARGIN, tokens: [100, 50], latencyMs: 300 },
  { agent: 'Frank workspace', user: 'erin', status: 'succeeded', agoMs: 5 * DAY, tokens: [100, 50], latencyMs: 301 },
  { agent: 'Frank workspace', user: 'erin', status: 'canceled', agoMs: 5 * DAY },
  { agent: 'Frank workspace', user: 'frank', status: 'succeeded', agoMs: 7 * DAY + MARGIN, tokens: [1, 1], latencyMs: 1 },
  // Bob public: month, at its boundary; run by erin too, and by a deleted account.
  { agent: 'Bob public', user: 'bob', status: 'succeeded', agoMs: 10 * DAY, tokens: [5, 5], latencyMs: 10 },
  { agent: 'Bob public', user: 'erin', status: 'succeeded', agoMs: 30 * DAY - MARGIN, tokens: [5, 5], latencyMs: 20 },
  { agent: 'Bob public', user: null, status: 'succeeded', agoMs: 12 * DAY, tokens: [5, 5], latencyMs: 30 },
  { agent: 'Bob public', user: 'bob', status: 'succeeded', agoMs: 30 * DAY + MARGIN, tokens: [5, 5], latencyMs: 40 },
  // Bob private: would lead every board if it leaked.
  ...Array.from({ length: 10 }, (): WorldRun => ({ agent: 'Bob private', user: 'bob', status: 'succeeded', agoMs: 1 * HOUR })),
  // Bob shared: Erin's workspace board lists it (a share to her), Frank's does not.
  { agent: 'Bob shared', user: 'erin', status: 'succeeded', agoMs: 8 * DAY, tokens: [4, 4], latencyMs: 44 },
  // Old timer: only before the month.
  { agent: 'Old timer', user: 'erin', status: 'succeeded', agoMs: 40 * DAY, tokens: [3, 3], latencyMs: 70 },
  // Deleted star: never listed.
  ...Array.from({ length: 10 }, (): WorldRun => ({ agent: 'Deleted star', user: 'erin', status: 'succeeded', agoMs: 1 * HOUR })),
  // Ties: equal score and rate, the later last use first; then equal to the millisecond, by name.
  { agent: 'Tie later', user: 'erin', status: 'succeeded', agoMs: 2 * DAY, latencyMs: 5 },
  { agent: 'Tie later', user: 'erin', status: 'succeeded', agoMs: 2 * DAY + HOUR, latencyMs: 5 },
  { agent: 'Tie b', user: 'erin', status: 'succeeded', agoMs: 3 * DAY, latencyMs: 5 },
  { agent: 'Tie b', user: 'erin', status: 'succeeded', agoMs: 3 * DAY + HOUR, latencyMs: 5 },
  { agent: 'Tie a', user: 'erin', status: 'succeeded', agoMs: 3 * DAY, latencyMs: 5 },
  { agent: 'Tie a', user: 'erin', status: 'succeeded', agoMs: 3 * DAY + HOUR, latencyMs: 5 },
  // Equal score (2 succeeded, one runner), different success rates.
  { agent: 'Rate low', user: 'frank', status: 'succeeded', agoMs: 2 * DAY },
  { agent: 'Rate low', user: 'frank', status: 'succeeded', agoMs: 2 * DAY },
  { agent: 'Rate low', user: 'frank', status: 'failed', agoMs: 1 * HOUR },
  { agent: 'Rate high', user: 'frank', status: 'succeeded', agoMs: 6 * DAY },
  { agent: 'Rate high', user: 'frank', status: 'succeeded', agoMs: 6 * DAY },
  { agent: 'Rate high', user: 'frank', status: 'running', agoMs: 30 * DAY + MARGIN },
  // More agents than the default limit.
  { agent: 'Filler 1', user: 'grace', status: 'succeeded', agoMs: 20 * DAY, tokens: [2, 2], latencyMs: 3 },
  { agent: 'Filler 2', user: 'grace', status: 'failed', agoMs: 20 * DAY, tokens: [2, 2], latencyMs: 3 },
  { agent: 'Filler 3', user: 'grace', status: 'succeeded', agoMs: 21 * DAY },
  { agent: 'Filler 3', user: 'frank', status: 'failed', agoMs: 21 * DAY },
]

const PERIOD_SPAN: Record<LeaderboardPeriod, number | null> = { day: DAY, week: 7 * DAY, month: 30 * DAY, all: null }

/** The leaderboard the pure functions give over {@link RUNS}, for the agents `listed` (names). */
function expectedBoard(listed: string[], period: LeaderboardPeriod, seededAt: number, uuids: Map<string, string>) {
  const span = PERIOD_SPAN[period]
  const entries = listed.flatMap((name) => {
    const runs = RUNS.filter((run) => run.agent === name && (span === null || run.agoMs < span))
    if (!runs.length) return []
    const succeeded = runs.filter((run) => run.status === 'succeeded')
    const users = new Set(runs.flatMap((run) => (run.user ? [run.user] : []))).size
    const latencies = succeeded.flatMap((run) => (run.latencyMs == null ? [] : [run.latencyMs]))
    return [
      {
        agent: { name, uuid: uuids.get(name)! },
        runs: runs.length,
        succeeded_runs: succeeded.length,
        users,
        success_rate: successRate(succeeded.length, runs.length),
        avg_latency_ms: latencies.length ? round4(latencies.reduce((a, b) => a + b, 0) / latencies.length) : null,
        total_tokens: runs.reduce((sum, run) => sum + (run.tokens ? run.tokens[0] + run.tokens[1] : 0), 0),
        last_used_at: new Date(seededAt - Math.min(...runs.map((run) => run.agoMs))).toISOString(),
        score: leaderboardScore(succeeded.length, users),
      },
    ]
  })
  return entries.sort(compareEntries).map((entry, index) => ({ rank: index + 1, ...entry }))
}

/** The figures of an answer's entries, the agent reduced to name and uuid (as {@link expectedBoard} has them). */
const figures = (data: TLeaderboardEntry[]) =>
  data.map(({ agent, ...rest }) => ({ ...rest, agent: { name: agent.name, uuid: agent.uuid } }))

describe('agents.leaderboard (GET /api/v1/agents/leaderboard)', () => {
  let t: TestApp
  let erin: Member
  let frank: Member
  let grace: Member
  let bob: Member
  /** When the runs' ages were measured from. */
  let seededAt: number
  const uuids = new Map<string, string>()
  const users = () => ({ erin, frank, grace, bob })

  /** Frank works in Erin's workspace (his own primary one is empty). */
  const inErins = () => ({ 'X-Workspace-UUID': erin.workspaceUuid })
  const board = (query = '', user: { token: string } = erin, headers: Record<string, string> = {}): Promise<HttpResult> =>
    t.http('GET', `/api/v1/agents/leaderboard${query}`, {
      token: user.token,
      headers: user === frank ? { ...inErins(), ...headers } : headers,
    })
  const ok = (res: HttpResult): { data: TLeaderboardEntry[]; meta: Record<string, string> } => {
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['data', 'meta'])
    expect(res.body.meta.cached_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    return res.body
  }
  const names = (res: HttpResult) => ok(res).data.map((entry) => entry.agent.name)

  beforeAll(async () => {
    t = await createTestApp()
    erin = await member(t, await t.make.user({ name: 'Erin' }))
    frank = await member(t, await t.make.user({ name: 'Frank' }))
    grace = await member(t, await t.make.user({ name: 'Grace' }))
    bob = await member(t, await t.make.user({ name: 'Bob' }))
    await t.make.member(erin.workspaceUuid, erin, frank, 'member')
    await t.make.member(erin.workspaceUuid, erin, grace, 'member')
    for (const [name, agent] of Object.entries(AGENTS)) {
      const owner = users()[agent.owner]
      const body = { name, description: `${name} helps`, visibility: agent.visibility, profile_photo_config: { emoji: '🤖' } }
      // Erin's and Frank's agents live in Erin's primary workspace, Bob's in his.
      const home = agent.owner === 'bob' ? bob.workspaceUuid : erin.workspaceUuid
      uuids.set(name, await createIn(t, 'agents', owner, home, body))
    }
    seededAt = Date.now()
    for (const run of RUNS) {
      const runner = run.user ? users()[run.user] : null
      const [p, c] = run.tokens ?? [0, 0]
      await t.sql(
        `insert into runs (uuid, kind, status, agent_id, user_id, workspace_id, prompt_tokens, completion_tokens, total_tokens, latency_ms, created_at, updated_at)
         values (gen_random_uuid(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::timestamptz, now())`,
        [
          run.kind ?? 'agent',
          run.status,
          await idOf(t, 'agents', uuids.get(run.agent)!),
          runner?.id ?? null,
          (runner ?? bob).wsId,
          p,
          c,
          p + c,
          run.latencyMs ?? null,
          new Date(seededAt - run.agoMs).toISOString(),
        ],
      )
    }
    // A prompt run (no agent) and the deleted agent's soft delete.
    await t.sql(
      `insert into runs (uuid, kind, status, user_id, workspace_id, created_at, updated_at) values (gen_random_uuid(), 'prompt', 'succeeded', ?, ?, now(), now())`,
      [erin.id, erin.wsId],
    )
    await t.sql('update agents set deleted_at = now() where uuid = ?', [uuids.get('Deleted star')])
    for (const [name, agent] of Object.entries(AGENTS)) {
      if (!agent.sharedWithErin) continue
      await t.sql(
        `insert into shares (resource_type, resource_id, entity_type, entity_id, permission, created_at, updated_at)
         values ('agents', ?, 'user', ?, 'read', now(), now())`,
        [await idOf(t, 'agents', uuids.get(name)!), erin.id],
      )
    }
  })
  afterAll(async () => t?.close())

  /** The agents each board may list (names), per caller and scope. */
  const ERIN_WORKSPACE = Object.keys(AGENTS).filter(
    (name) => (AGENTS[name]!.owner !== 'bob' || AGENTS[name]!.sharedWithErin) && !AGENTS[name]!.deleted,
  )
  const FRANK_WORKSPACE = ERIN_WORKSPACE.filter((name) => name !== 'Erin private' && name !== 'Bob shared')
  const PUBLIC = Object.keys(AGENTS).filter((name) => AGENTS[name]!.visibility === 'public')

  for (const period of LEADERBOARD_PERIODS) {
    it(`period ${period}: the ranks and figures are those of the pure functions over the runs, for each caller and scope`, async () => {
      const cases: [Member, string, string[]][] = [
        [erin, 'workspace', ERIN_WORKSPACE],
        [frank, 'workspace', FRANK_WORKSPACE],
        [erin, 'public', PUBLIC],
        [bob, 'public', PUBLIC],
      ]
      for (const [caller, scope, listed] of cases) {
        const answer = ok(await board(`?period=${period}&scope=${scope}&limit=100`, caller, { 'Cache-Control': 'no-cache' }))
        expect(answer.meta).toMatchObject({ period, scope, formula: LEADERBOARD_FORMULA })
        expect(figures(answer.data), `${scope} board of user ${caller.id}`).toEqual(expectedBoard(listed, period, seededAt, uuids))
      }
    })
  }

  it('known figures: the day board of the workspace, in order, with the agent shape', async () => {
    const answer = ok(await board('?period=day'))
    expect(answer.meta).toEqual({
      period: 'day',
      scope: 'workspace',
      formula: 'succeeded_runs * (1 + ln(users))',
      cached_at: answer.meta.cached_at,
    })
    expect(answer.data.map((entry) => [entry.rank, entry.agent.name, entry.score])).toEqual([
      [1, 'Public helper', 6.2958],
      [2, 'Erin private', 2],
      [3, 'Rate low', 0],
    ])
    const [first] = answer.data
    expect(first).toEqual({
      rank: 1,
      agent: {
        uuid: uuids.get('Public helper'),
        name: 'Public helper',
        description: 'Public helper helps',
        profile_photo_url: null,
        profile_photo_config: { emoji: '🤖' },
        visibility: 'public',
        is_owner: true,
      },
      runs: 3,
      succeeded_runs: 3,
      users: 3,
      success_rate: 1,
      avg_latency_ms: 233.3333,
      total_tokens: 90,
      last_used_at: new Date(seededAt - HOUR).toISOString(),
      score: 6.2958,
    })
    expect(ok(await board('?period=day', frank)).data.find((entry) => entry.agent.name === 'Public helper')?.agent.is_owner).toBe(false)
  })

  it('each period boundary: a run 10 minutes inside counts, 10 minutes outside does not', async () => {
    const entry = async (period: LeaderboardPeriod, name: string) =>
      ok(await board(`?period=${period}&limit=100&scope=public`)).data.find((item) => item.agent.name === name) ??
      ok(await board(`?period=${period}&limit=100`)).data.find((item) => item.agent.name === name)
    // Public helper: 3 runs in the day (one at 24 h − 10 min), the failure at 24 h + 10 min in the week.
    expect(await entry('day', 'Public helper')).toMatchObject({ runs: 3, succeeded_runs: 3 })
    expect(await entry('week', 'Public helper')).toMatchObject({ runs: 4, succeeded_runs: 3, success_rate: 0.75 })
    // Frank workspace: 7 days − 10 min counts in the week, 7 days + 10 min only in the month.
    expect(await entry('week', 'Frank workspace')).toMatchObject({
      runs: 3,
      succeeded_runs: 2,
      users: 2,
      total_tokens: 300,
      avg_latency_ms: 300.5,
    })
    expect(await entry('month', 'Frank workspace')).toMatchObject({ runs: 4, succeeded_runs: 3 })
    // Bob public: 30 days − 10 min counts in the month, 30 days + 10 min only in all; a deleted runner is no user.
    expect(await entry('month', 'Bob public')).toMatchObject({ runs: 3, succeeded_runs: 3, users: 2 })
    expect(await entry('all', 'Bob public')).toMatchObject({ runs: 4, succeeded_runs: 4, users: 2 })
    expect(await entry('month', 'Old timer')).toBeUndefined()
    expect(await entry('all', 'Old timer')).toMatchObject({ runs: 1, score: 1 })
  })

  it('ties: the higher success rate, then the later last use, then the name', async () => {
    const week = names(await board('?period=week&limit=100'))
    expect(week.indexOf('Rate high')).toBe(week.indexOf('Rate low') - 1)
    expect(week.slice(week.indexOf('Tie later'), week.indexOf('Tie later') + 3)).toEqual(['Tie later', 'Tie a', 'Tie b'])
  })

  it('scope workspace shows what the caller may see there (shares included); scope public every public agent; never a private agent of another tenant', async () => {
    const erinWeek = names(await board('?period=all&limit=100'))
    expect(erinWeek).toContain('Erin private')
    expect(erinWeek).not.toContain('Bob public')
    expect(erinWeek).toContain('Bob shared')
    expect(names(await board('?period=all&limit=100', frank))).not.toContain('Erin private')
    expect(names(await board('?period=all&limit=100', frank))).not.toContain('Bob shared')
    expect(names(await board('?period=all&scope=public&limit=100')).sort()).toEqual(['Bob public', 'Public helper'])
    for (const user of [erin, frank, bob]) {
      for (const scope of ['workspace', 'public']) {
        const listed = names(await board(`?period=all&scope=${scope}&limit=100`, user))
        if (user !== bob) expect(listed).not.toContain('Bob private')
        expect(listed).not.toContain('Deleted star')
        expect(listed).not.toContain('Unused')
      }
    }
    // Bob's own workspace board has his agents, and none of Erin's workspace.
    expect(names(await board('?period=all&limit=100', bob))).toEqual(['Bob private', 'Bob public', 'Bob shared'])
  })

  it('limit keeps the first entries of the full board; the default is 10 and the default period a week', async () => {
    const full = ok(await board('?period=all&limit=100')).data
    expect(full.length).toBeGreaterThan(10)
    expect(ok(await board('?period=all&limit=2')).data).toEqual(full.slice(0, 2))
    expect(ok(await board('?period=all')).data).toEqual(full.slice(0, 10))
    const byDefault = ok(await board(''))
    expect(byDefault.meta).toMatchObject({ period: 'week', scope: 'workspace' })
    expect(byDefault.data).toEqual(ok(await board('?period=week&scope=workspace&limit=10')).data)
  })

  it('each validation rule is a 400 naming its field', async () => {
    for (const [query, field] of [
      ['?period=year', 'period'],
      ['?scope=everyone', 'scope'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=1.5', 'limit'],
      ['?limit=ten', 'limit'],
      ['?workspace_uuid=nope', 'workspace_uuid'],
      ['?sort=score', 'sort'],
    ] as const) {
      expectNamed(await board(query), field)
    }
  })

  it("answers 401 without a token, 404 for another tenant's workspace, and 200 to a plain member and a read-only token", async () => {
    expect((await t.http('GET', '/api/v1/agents/leaderboard')).status).toBe(401)
    expect((await t.http('GET', '/api/v1/agents/leaderboard', { token: 'nope' })).status).toBe(401)
    const foreign = await board('', bob, { 'X-Workspace-UUID': erin.workspaceUuid })
    expect(foreign.status).toBe(404)
    expect(JSON.stringify(foreign.body)).not.toContain('Public helper')
    expect((await board(`?workspace_uuid=${erin.workspaceUuid}`, bob)).status).toBe(404)
    expect(names(await board('?period=day', frank))).toContain('Public helper')
    expect(names(await board('?period=day&scope=public', await readOnlyToken(t, frank)))).toContain('Public helper')
  })

  it('the workspace context chooses the agents: Erin in a second workspace of hers sees only its agents', async () => {
    const second = await t.make.workspace(erin)
    const uuid = await createIn(t, 'agents', erin, second.uuid, { name: 'Second home' })
    await t.sql(
      `insert into runs (uuid, kind, status, agent_id, user_id, workspace_id, created_at, updated_at)
       values (gen_random_uuid(), 'agent', 'succeeded', ?, ?, ?, now(), now())`,
      [await idOf(t, 'agents', uuid), erin.id, await idOf(t, 'workspaces', second.uuid)],
    )
    expect(names(await board('?period=day', erin, { 'X-Workspace-UUID': second.uuid }))).toEqual(['Second home'])
    expect(names(await board(`?period=day&workspace_uuid=${second.uuid}`))).toEqual(['Second home'])
  })

  it('is cached: an identical request answers the same cached_at and data; Cache-Control: no-cache recomputes', async () => {
    const query = '?period=day&limit=3'
    const first = ok(await board(query))
    await t.sql(
      `insert into runs (uuid, kind, status, agent_id, user_id, workspace_id, created_at, updated_at)
       values (gen_random_uuid(), 'agent', 'succeeded', ?, ?, ?, now(), now())`,
      [await idOf(t, 'agents', uuids.get('Erin private')!), erin.id, erin.wsId],
    )
    const hit = ok(await board(query))
    expect(hit).toEqual(first)
    const fresh = ok(await board(query, erin, { 'Cache-Control': 'no-cache' }))
    expect(fresh.meta.cached_at > first.meta.cached_at).toBe(true)
    expect(fresh.data.find((entry) => entry.agent.name === 'Erin private')?.runs).toBe(3)
    expect(ok(await board(query))).toEqual(fresh)
    // Another parameter, another caller: other entries.
    expect(ok(await board('?period=day&limit=4')).meta.cached_at).not.toBe(fresh.meta.cached_at)
    expect(ok(await board(query, frank)).meta.cached_at).not.toBe(fresh.meta.cached_at)
    await t.sql('delete from runs where agent_id = ? and created_at > ?::timestamptz', [
      await idOf(t, 'agents', uuids.get('Erin private')!),
      new Date(seededAt).toISOString(),
    ])
  })

  it('tRPC callers get the same answer', async () => {
    const answer = await t.as(erin).agents.leaderboard({ period: 'all', limit: 100 })
    expect(figures(answer.data)).toEqual(expectedBoard(ERIN_WORKSPACE, 'all', seededAt, uuids))
  })

  it('GET /api/v1/agents/leaderboard is its own route: agents by uuid still answer, and the document lists both', async () => {
    ok(await board())
    const one = await t.http('GET', `/api/v1/agents/${uuids.get('Public helper')}`, { token: erin.token })
    expect(one.status).toBe(200)
    expect(one.body.data.name).toBe('Public helper')
    const spec = (await t.http('GET', '/openapi.json')).body
    expect(spec.paths['/api/v1/agents/leaderboard']?.get).toBeDefined()
    expect(spec.paths['/api/v1/agents/{agent_uuid}']?.get).toBeDefined()
  })
})
