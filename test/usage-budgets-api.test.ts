/**
 * The REST surface of usage and budgets (docs/api/usage-and-budgets.md;
 * routers/usage.router.ts, src/usage/): `GET /api/v1/usage` grouped, sorted, filtered and scoped to
 * what the caller may see; the budgets' CRUD with every validation rule, role and tenancy check;
 * and the live spend of budgets of every period and scope. Usage on other days is placed by
 * inserting runs with an explicit `created_at` (the insert trigger adds them to `usage_daily` on
 * that day); usage of today comes from agent runs against the local upstream model.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { expectErrorBody, hiddenCheck, ISO, issuePaths, trpcError, UUID } from './helpers/expect.ts'
import { expectNamed, readOnlyToken } from './helpers/agents.ts'
import { workspaceId } from './helpers/rows.ts'
import { budgetRefusal } from '../src/usage/index.ts'
import { VALIDATION_MESSAGE } from '../src/trpc/errors.ts'

/** Keys of the Budget shape, sorted. */
const BUDGET_KEYS = [
  'access_token_uuid',
  'action',
  'agent_uuid',
  'alert_thresholds',
  'created_at',
  'exceeded',
  'is_active',
  'limit_cost',
  'limit_tokens',
  'name',
  'period',
  'period_end',
  'period_start',
  'remaining_cost',
  'remaining_tokens',
  'scope',
  'spent_cost',
  'spent_tokens',
  'updated_at',
  'user_id',
  'uuid',
]
const TOTAL_KEYS = ['completion_tokens', 'cost', 'prompt_tokens', 'runs', 'total_tokens']
const UNKNOWN_UUID = '0190a8f0-0000-7000-8000-000000000000'
const DAY_MS = 86_400_000

const expectHiddenBudget = hiddenCheck('Budget')
const inWs = (uuid: string) => ({ 'x-workspace-uuid': uuid })

/** A run as the `runs` table stores it, with the names `GET usage` shows for it. */
interface StoredRun {
  day: string
  agentUuid: string | null
  agentName: string | null
  userId: number | null
  userName: string | null
  model: string | null
  tokenUuid: string | null
  tokenName: string | null
  createdMs: number
  prompt: number
  completion: number
  total: number
  /** Cost in millionths of a dollar (exact). */
  micro: number
}

type Group = 'day' | 'week' | 'month' | 'agent' | 'user' | 'model' | 'access_token'

const mondayOf = (day: string) => {
  const date = new Date(`${day}T00:00:00Z`)
  return new Date(date.getTime() - ((date.getUTCDay() + 6) % 7) * DAY_MS).toISOString().slice(0, 10)
}
/** Code-point order, nulls last (the names used here sort the same under every collation). */
const cmp = (a: string | number | null, b: string | number | null) => {
  if (a === b) return 0
  if (a === null) return 1
  if (b === null) return -1
  return a < b ? -1 : 1
}

/** The key a run has for one group, and what it sorts by. */
function keyOf(run: StoredRun, group: Group): { field: string; value: unknown; sort: (string | number | null)[] } {
  if (group === 'day') return { field: 'date', value: run.day, sort: [run.day] }
  if (group === 'week') return { field: 'date', value: mondayOf(run.day), sort: [mondayOf(run.day)] }
  if (group === 'month') return { field: 'date', value: `${run.day.slice(0, 7)}-01`, sort: [run.day.slice(0, 7)] }
  if (group === 'agent')
    return {
      field: 'agent',
      value: run.agentUuid ? { uuid: run.agentUuid, name: run.agentName } : null,
      sort: [run.agentName, run.agentUuid],
    }
  if (group === 'user')
    return { field: 'user', value: run.userId ? { id: run.userId, name: run.userName } : null, sort: [run.userName, run.userId] }
  if (group === 'model') return { field: 'model', value: run.model, sort: [run.model] }
  return {
    field: 'access_token',
    value: run.tokenUuid ? { uuid: run.tokenUuid, name: run.tokenName } : null,
    sort: [run.tokenName, run.tokenUuid],
  }
}

/** What `GET usage` must answer for these runs, as computed independently from the `runs` table. */
function expectedUsage(runs: StoredRun[], groups: Group[]) {
  const buckets = new Map<string, { keys: Record<string, unknown>; sort: (string | number | null)[]; sums: number[] }>()
  for (const run of runs) {
    const keys = groups.map((group) => keyOf(run, group))
    const id = JSON.stringify(keys.map((key) => key.value))
    const bucket = buckets.get(id) ?? {
      keys: Object.fromEntries(keys.map((key) => [key.field, key.value])),
      sort: keys.flatMap((key) => key.sort),
      sums: [0, 0, 0, 0, 0],
    }
    bucket.sums = [
      bucket.sums[0] + 1,
      bucket.sums[1] + run.prompt,
      bucket.sums[2] + run.completion,
      bucket.sums[3] + run.total,
      bucket.sums[4] + run.micro,
    ]
    buckets.set(id, bucket)
  }
  const sorted = [...buckets.values()].sort((a, b) => {
    for (let i = 0; i < a.sort.length; i += 1) {
      const order = cmp(a.sort[i], b.sort[i])
      if (order) return order
    }
    return 0
  })
  return sorted.map(({ keys, sums }) => ({
    ...keys,
    runs: sums[0],
    prompt_tokens: sums[1],
    completion_tokens: sums[2],
    total_tokens: sums[3],
    cost: sums[4] / 1e6,
  }))
}

/** The sums of runs, as `meta.totals`. */
const totalsOf = (runs: StoredRun[]) => ({
  runs: runs.length,
  prompt_tokens: runs.reduce((sum, run) => sum + run.prompt, 0),
  completion_tokens: runs.reduce((sum, run) => sum + run.completion, 0),
  total_tokens: runs.reduce((sum, run) => sum + run.total, 0),
  cost: runs.reduce((sum, run) => sum + run.micro, 0) / 1e6,
})

/** UTC calendar period bounds of now, as the service computes them (weeks from Monday). */
function periodsNow() {
  const now = new Date()
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const week = day - ((now.getUTCDay() + 6) % 7) * DAY_MS
  const month = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)
  const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)
  return {
    day: [day, day + DAY_MS],
    week: [week, week + 7 * DAY_MS],
    month: [month, nextMonth],
    total: [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY],
  } as Record<'day' | 'week' | 'month' | 'total', [number, number]>
}

describe('usage and budgets over REST', () => {
  let t: TestApp
  let upstream: Upstream
  let olga: TestUser
  let adam: TestUser
  let mia: TestUser
  let max: TestUser
  let sam: TestUser

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '3000' })
    olga = await t.make.user({ name: 'Olga Owner' })
    adam = await t.make.user({ name: 'Adam Admin' })
    mia = await t.make.user({ name: 'Mia Member' })
    max = await t.make.user({ name: 'Max Member' })
    sam = await t.make.user({ name: 'Sam Stranger' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  /** An agent created over REST in the workspace of `headers` (visible to its members). */
  const makeAgent = async (user: { token: string }, name: string, headers: Record<string, string> = {}) => {
    const res = await t.http('POST', '/api/v1/agents', {
      token: user.token,
      headers,
      body: { name, instruction: 'Answer briefly.', visibility: 'workspace' },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string; name: string }
  }
  /** A run of `agentUuid` answered by the upstream with exactly these token counts. */
  const runAgent = async (
    token: string,
    agentUuid: string,
    usage: { prompt_tokens: number; completion_tokens: number },
    headers: Record<string, string> = {},
  ) => {
    upstream.enqueue({ kind: 'text', text: 'Fine.', usage })
    const res = await t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token, headers, body: { input: 'Hello' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res
  }
  /** An application token of `user` over REST (bound to `workspaceUuid` when given). */
  const makeToken = async (user: { token: string }, name: string, workspaceUuid?: string) => {
    const res = await t.http('POST', '/api/v1/access-tokens', {
      token: user.token,
      body: workspaceUuid ? { name, workspace_uuid: workspaceUuid } : { name },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return { uuid: res.body.data.uuid as string, token: res.body.data.access_token as string }
  }
  /** A run stored with SQL at `at` (the insert trigger counts it on that UTC day). */
  const insertRun = async (o: {
    workspace: string
    at: string
    userId: number | null
    agentUuid?: string | null
    model?: string | null
    tokenUuid?: string | null
    prompt: number
    completion: number
    cost: string
    kind?: 'agent' | 'thread' | 'prompt'
  }) => {
    await t.sql(
      `insert into runs (uuid, kind, status, agent_id, model, user_id, workspace_id, access_token_id, prompt_tokens, completion_tokens, total_tokens, cost, created_at, updated_at)
       values (gen_random_uuid(), ?, 'succeeded', (select id from agents where uuid = ?), ?, ?, ?, (select id from access_tokens where uuid = ?), ?, ?, ?, ?::numeric, ?::timestamptz, ?::timestamptz)`,
      [
        o.kind ?? 'agent',
        o.agentUuid ?? null,
        o.model === undefined ? 'gpt-4o-mini' : o.model,
        o.userId,
        await workspaceId(t, o.workspace),
        o.tokenUuid ?? null,
        o.prompt,
        o.completion,
        o.prompt + o.completion,
        o.cost,
        o.at,
        o.at,
      ],
    )
  }
  /** The runs of a workspace straight from the `runs` table, with what `GET usage` names them by. */
  const storedRuns = async (workspaceUuid: string): Promise<StoredRun[]> => {
    const rows = await t.sql(
      `select to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD') as day, a.uuid as agent_uuid, a.name as agent_name, u.id as user_id,
         u.name as user_name, r.model, tk.uuid as token_uuid, tk.name as token_name, (extract(epoch from r.created_at) * 1000)::float8 as created_ms,
         r.prompt_tokens, r.completion_tokens, r.total_tokens, r.cost::text as cost
       from runs r left join agents a on a.id = r.agent_id left join users u on u.id = r.user_id left join access_tokens tk on tk.id = r.access_token_id
       where r.workspace_id = (select id from workspaces where uuid = ?)`,
      [workspaceUuid],
    )
    return rows.map((row) => ({
      day: String(row.day),
      agentUuid: (row.agent_uuid as string | null) ?? null,
      agentName: (row.agent_name as string | null) ?? null,
      userId: row.user_id === null ? null : Number(row.user_id),
      userName: (row.user_name as string | null) ?? null,
      model: (row.model as string | null) || null,
      tokenUuid: (row.token_uuid as string | null) ?? null,
      tokenName: (row.token_name as string | null) ?? null,
      createdMs: Number(row.created_ms),
      prompt: Number(row.prompt_tokens),
      completion: Number(row.completion_tokens),
      total: Number(row.total_tokens),
      micro: Math.round(Number(row.cost) * 1e6),
    }))
  }

  describe('GET /api/v1/usage', () => {
    let books: { uuid: string; name: string }
    let inBooks: Record<string, string>
    let alpha1: { uuid: string; name: string }
    let alpha2: { uuid: string; name: string }
    let beta: { uuid: string; name: string }
    let idle: { uuid: string; name: string }
    let samAgent: { uuid: string; name: string }
    let ci: { uuid: string; token: string }
    let all: StoredRun[]
    const get = (query: string, user: { token: string } = olga, headers: Record<string, string> = inBooks) =>
      t.http('GET', `/api/v1/usage${query}`, { token: user.token, headers })
    const ok = async (query: string, user: { token: string } = olga, headers: Record<string, string> = inBooks) => {
      const res = await get(query, user, headers)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'meta'])
      expect(res.body.meta.currency).toBe('USD')
      expect(Object.keys(res.body.meta.totals).sort()).toEqual(TOTAL_KEYS)
      return res.body as { data: Record<string, any>[]; meta: { totals: Record<string, number>; currency: string } }
    }

    beforeAll(async () => {
      books = await t.make.workspace(olga, { name: 'Usage Books' })
      inBooks = inWs(books.uuid)
      await t.make.member(books, olga, adam, 'admin')
      await t.make.member(books, olga, mia, 'member')
      await t.make.member(books, olga, max, 'member')
      alpha1 = await makeAgent(olga, 'Alpha', inBooks)
      alpha2 = await makeAgent(olga, 'Alpha', inBooks)
      beta = await makeAgent(olga, 'Beta', inBooks)
      idle = await makeAgent(olga, 'Idle', inBooks)
      samAgent = await makeAgent(sam, 'Alpha')
      ci = await makeToken(olga, 'ci-token', books.uuid)
      // Today, through the model: olga (sign-in token), mia (sign-in token), olga's ci-token (bound to the workspace).
      await runAgent(olga.token, beta.uuid, { prompt_tokens: 11, completion_tokens: 4 }, inBooks)
      await runAgent(mia.token, alpha1.uuid, { prompt_tokens: 21, completion_tokens: 9 }, inBooks)
      await runAgent(ci.token, alpha2.uuid, { prompt_tokens: 31, completion_tokens: 14 })
      // Other days: 2025-01-06 and 2025-01-13 are Mondays; 01-08 is in the week of 01-06, 01-31 in the week of 01-27.
      const w = books.uuid
      await insertRun({
        workspace: w,
        at: '2025-01-06T10:00:00Z',
        userId: olga.id,
        agentUuid: alpha1.uuid,
        prompt: 100,
        completion: 50,
        cost: '0.000045',
      })
      await insertRun({
        workspace: w,
        at: '2025-01-08T23:59:59Z',
        userId: mia.id,
        agentUuid: beta.uuid,
        model: 'gpt-4o',
        prompt: 200,
        completion: 100,
        cost: '0.0015',
      })
      await insertRun({
        workspace: w,
        at: '2025-01-13T00:00:00Z',
        userId: olga.id,
        agentUuid: alpha2.uuid,
        model: 'gpt-4o',
        tokenUuid: ci.uuid,
        prompt: 300,
        completion: 150,
        cost: '0.00225',
      })
      await insertRun({
        workspace: w,
        at: '2025-01-31T23:59:59.999Z',
        userId: mia.id,
        agentUuid: alpha1.uuid,
        prompt: 10,
        completion: 10,
        cost: '0.000003',
      })
      await insertRun({
        workspace: w,
        at: '2025-02-03T12:00:00Z',
        userId: adam.id,
        agentUuid: null,
        kind: 'prompt',
        prompt: 400,
        completion: 200,
        cost: '0.00012',
      })
      // Another tenant's usage on the same day: never counted here.
      await insertRun({
        workspace: sam.workspaceUuid,
        at: '2025-01-06T10:00:00Z',
        userId: sam.id,
        agentUuid: samAgent.uuid,
        prompt: 7000,
        completion: 7000,
        cost: '1.5',
      })
      all = await storedRuns(books.uuid)
      expect(all).toHaveLength(8)
    })

    it('groups by day by default, dates ascending, totals equal to the sums of the runs table', async () => {
      const body = await ok('')
      const today = new Date().toISOString().slice(0, 10)
      expect(body.data.map((row) => row.date)).toEqual(['2025-01-06', '2025-01-08', '2025-01-13', '2025-01-31', '2025-02-03', today])
      expect(body.data).toEqual(expectedUsage(all, ['day']))
      for (const row of body.data) expect(Object.keys(row).sort()).toEqual(['date', ...TOTAL_KEYS].sort())
      const [sums] = await t.sql(
        `select count(*)::int as runs, sum(prompt_tokens)::int as p, sum(completion_tokens)::int as c, sum(total_tokens)::int as tt, sum(cost)::text as cost
         from runs where workspace_id = (select id from workspaces where uuid = ?)`,
        [books.uuid],
      )
      expect(body.meta.totals).toEqual({
        runs: sums.runs,
        prompt_tokens: sums.p,
        completion_tokens: sums.c,
        total_tokens: sums.tt,
        cost: Number(Number(sums.cost).toFixed(6)),
      })
      expect(body.meta.totals.runs).toBe(8)
      expect(await ok('?group_by=day')).toEqual(body)
    })

    it('groups by week (Monday) and by month, each the first day of its period', async () => {
      const weeks = await ok('?group_by=week&date_to=2025-12-31')
      expect(weeks.data.map((row) => row.date)).toEqual(['2025-01-06', '2025-01-13', '2025-01-27', '2025-02-03'])
      expect(weeks.data[0]).toMatchObject({ runs: 2, prompt_tokens: 300, completion_tokens: 150, total_tokens: 450, cost: 0.001545 })
      const old = all.filter((run) => run.day <= '2025-12-31')
      expect(weeks.data).toEqual(expectedUsage(old, ['week']))
      expect((await ok('?group_by=week')).data).toEqual(expectedUsage(all, ['week']))
      const months = await ok('?group_by=month')
      expect(months.data.slice(0, 2).map((row) => [row.date, row.runs])).toEqual([
        ['2025-01-01', 4],
        ['2025-02-01', 1],
      ])
      expect(months.data).toEqual(expectedUsage(all, ['month']))
      expect(months.meta.totals).toEqual(totalsOf(all))
    })

    it('groups by agent (name, then id; no agent last), only agents with usage, never another tenant’s', async () => {
      const body = await ok('?group_by=agent')
      expect(body.data.map((row) => row.agent && [row.agent.name, row.agent.uuid])).toEqual([
        ['Alpha', alpha1.uuid],
        ['Alpha', alpha2.uuid],
        ['Beta', beta.uuid],
        null,
      ])
      expect(body.data).toEqual(expectedUsage(all, ['agent']))
      for (const row of body.data) expect(Object.keys(row).sort()).toEqual(['agent', ...TOTAL_KEYS].sort())
      expect(JSON.stringify(body)).not.toContain(idle.uuid)
      expect(JSON.stringify(body)).not.toContain(samAgent.uuid)
      expect(body.meta.totals).toEqual(totalsOf(all))
    })

    it('groups by user (name, then id), only users with usage', async () => {
      const body = await ok('?group_by=user')
      expect(body.data.map((row) => row.user)).toEqual([
        { id: adam.id, name: 'Adam Admin' },
        { id: mia.id, name: 'Mia Member' },
        { id: olga.id, name: 'Olga Owner' },
      ])
      expect(body.data).toEqual(expectedUsage(all, ['user']))
      expect(body.data.some((row) => row.user.id === max.id)).toBe(false)
    })

    it('groups by model (the catalog slug)', async () => {
      const body = await ok('?group_by=model')
      expect(body.data.map((row) => [row.model, row.runs])).toEqual([
        ['gpt-4o', 2],
        ['gpt-4o-mini', 6],
      ])
      expect(body.data).toEqual(expectedUsage(all, ['model']))
    })

    it('groups by access token (name, then id; runs without one last)', async () => {
      const body = await ok('?group_by=access_token')
      expect(body.data.map((row) => row.access_token?.name ?? null)).toEqual(['ci-token', 'sign-in', 'sign-in', null])
      expect(body.data[0]).toMatchObject({ access_token: { uuid: ci.uuid, name: 'ci-token' }, runs: 2, total_tokens: 45 + 450 })
      expect(body.data).toEqual(expectedUsage(all, ['access_token']))
      const [olgas, mias] = body.data.slice(1, 3).map((row) => row.access_token.uuid)
      const owners = await t.sql('select uuid, user_id from access_tokens where uuid in (?, ?)', [olgas, mias])
      expect(Object.fromEntries(owners.map((row) => [row.uuid, row.user_id]))).toEqual({ [olgas]: olga.id, [mias]: mia.id })
    })

    it('groups by a pair, sorted by the first group then the second, over REST and tRPC (array form)', async () => {
      const agentDay = await ok('?group_by=agent,day')
      expect(agentDay.data).toEqual(expectedUsage(all, ['agent', 'day']))
      expect(agentDay.data.slice(0, 3).map((row) => [row.agent.uuid, row.date])).toEqual([
        [alpha1.uuid, '2025-01-06'],
        [alpha1.uuid, '2025-01-31'],
        [alpha1.uuid, new Date().toISOString().slice(0, 10)],
      ])
      for (const row of agentDay.data) expect(Object.keys(row).sort()).toEqual(['agent', 'date', ...TOTAL_KEYS].sort())
      const dayAgent = await ok('?group_by=day,agent')
      expect(dayAgent.data).toEqual(expectedUsage(all, ['day', 'agent']))
      expect((await ok('?group_by=month,user')).data).toEqual(expectedUsage(all, ['month', 'user']))
      expect((await ok('?group_by=model,access_token')).data).toEqual(expectedUsage(all, ['model', 'access_token']))
      const viaTrpc = await t.as(olga, inBooks).usage.summary({ group_by: ['agent', 'day'] })
      expect(viaTrpc).toEqual(agentDay)
    })

    it('filters date_from and date_to inclusively (UTC days)', async () => {
      const body = await ok('?date_from=2025-01-08&date_to=2025-01-31')
      expect(body.data.map((row) => row.date)).toEqual(['2025-01-08', '2025-01-13', '2025-01-31'])
      const inRange = all.filter((run) => run.day >= '2025-01-08' && run.day <= '2025-01-31')
      expect(body.meta.totals).toEqual(totalsOf(inRange))
      expect((await ok('?date_from=2025-01-13&date_to=2025-01-13')).data.map((row) => row.date)).toEqual(['2025-01-13'])
      expect((await ok('?date_to=2025-01-06')).data.map((row) => row.date)).toEqual(['2025-01-06'])
      expect((await ok('?date_from=2025-02-03&group_by=month')).data.map((row) => row.date)).toEqual(
        expectedUsage(
          all.filter((run) => run.day >= '2025-02-03'),
          ['month'],
        ).map((row) => (row as Record<string, unknown>).date),
      )
      const nothing = await ok('?date_from=2024-01-01&date_to=2024-12-31')
      expect(nothing).toEqual({
        data: [],
        meta: { totals: { runs: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 }, currency: 'USD' },
      })
    })

    it('filters by agent_uuid, user_id and model, alone and together', async () => {
      const byAgent = await ok(`?agent_uuid=${alpha1.uuid}&group_by=agent`)
      expect(byAgent.data).toEqual(
        expectedUsage(
          all.filter((run) => run.agentUuid === alpha1.uuid),
          ['agent'],
        ),
      )
      expect(byAgent.data).toHaveLength(1)
      const byUser = await ok(`?user_id=${mia.id}&group_by=user`)
      expect(byUser.data).toEqual(
        expectedUsage(
          all.filter((run) => run.userId === mia.id),
          ['user'],
        ),
      )
      expect(byUser.data.map((row) => row.user.id)).toEqual([mia.id])
      const byModel = await ok('?model=gpt-4o&group_by=day')
      expect(byModel.data).toEqual(
        expectedUsage(
          all.filter((run) => run.model === 'gpt-4o'),
          ['day'],
        ),
      )
      const both = await ok(`?model=gpt-4o-mini&user_id=${olga.id}&agent_uuid=${alpha1.uuid}`)
      expect(both.meta.totals).toEqual(
        totalsOf(all.filter((run) => run.model === 'gpt-4o-mini' && run.userId === olga.id && run.agentUuid === alpha1.uuid)),
      )
      expect(both.meta.totals.runs).toBe(1)
      expect((await ok(`?agent_uuid=${samAgent.uuid}`)).data).toEqual([])
      expect((await ok(`?agent_uuid=${UNKNOWN_UUID}`)).data).toEqual([])
      expect((await ok('?model=claude-nope')).data).toEqual([])
    })

    it('shows a member their own usage only; owners and admins everyone’s', async () => {
      const mine = await ok('?group_by=user', mia)
      expect(mine.data.map((row) => row.user.id)).toEqual([mia.id])
      expect(mine.meta.totals).toEqual(totalsOf(all.filter((run) => run.userId === mia.id)))
      expect((await ok('?group_by=agent', mia)).data).toEqual(
        expectedUsage(
          all.filter((run) => run.userId === mia.id),
          ['agent'],
        ),
      )
      expect((await ok(`?user_id=${olga.id}`, mia)).data).toEqual([])
      expect((await ok(`?user_id=${olga.id}`, mia)).meta.totals.runs).toBe(0)
      expect((await ok(`?user_id=${mia.id}`, mia)).meta.totals).toEqual(mine.meta.totals)
      expect((await ok('', max)).data).toEqual([])
      const admin = await ok('?group_by=user', adam)
      expect(admin.data).toEqual(expectedUsage(all, ['user']))
      expect((await ok(`?user_id=${olga.id}`, adam)).meta.totals).toEqual(totalsOf(all.filter((run) => run.userId === olga.id)))
    })

    it.each([
      ['an unknown group', 'group_by=year', 'group_by'],
      ['three groups', 'group_by=day,agent,user', 'group_by'],
      ['a repeated group', 'group_by=agent,agent', 'group_by'],
      ['two periods', 'group_by=day,week', 'group_by'],
      ['month and week', 'group_by=week,month', 'group_by'],
      ['a group_by naming no group', 'group_by=,', 'group_by'],
      ['a blank group_by', 'group_by=%20', 'group_by'],
      ['a group in capitals', 'group_by=Day', 'group_by'],
      ['a malformed date_from', 'date_from=2025-1-5', 'date_from'],
      ['an impossible date_to', 'date_to=2025-02-30', 'date_to'],
      ['a date_from with a time', 'date_from=2025-01-05T00:00:00Z', 'date_from'],
      ['date_from after date_to', 'date_from=2025-02-01&date_to=2025-01-31', 'date_from'],
      ['an unknown query field', 'granularity=day', 'granularity'],
      ['a malformed agent_uuid', 'agent_uuid=alpha', 'agent_uuid'],
      ['a non-numeric user_id', 'user_id=olga', 'user_id'],
      ['user_id 0', 'user_id=0', 'user_id'],
      ['a model over 255 characters', `model=${'m'.repeat(256)}`, 'model'],
      ['a malformed workspace_uuid', 'workspace_uuid=books', 'workspace_uuid'],
    ])('answers 400 naming the field for %s', async (_label, query, field) => {
      const res = await get(`?${query}`)
      expectErrorBody(res, 400, 'BAD_REQUEST', VALIDATION_MESSAGE)
      expectNamed(res, field)
    })

    it('rejects the same rules through tRPC callers, naming the field', async () => {
      expect(issuePaths(await trpcError(t.as(olga, inBooks).usage.summary({ group_by: ['day', 'week'] })))).toEqual([['group_by']])
      expect(issuePaths(await trpcError(t.as(olga, inBooks).usage.summary({ group_by: ['user', 'user'] })))).toEqual([['group_by']])
      expect(issuePaths(await trpcError(t.as(olga, inBooks).usage.summary({ date_from: '2025-02-01', date_to: '2025-01-01' })))).toEqual([
        ['date_from'],
      ])
      expect(issuePaths(await trpcError(t.as(olga, inBooks).usage.summary({ group_by: [] })))).toEqual([['group_by']])
    })

    it('takes an empty query value as absent (the REST surface drops it), as everywhere', async () => {
      expect(await ok('?group_by=&model=')).toEqual(await ok(''))
    })

    it('answers 401 without a token and 404 for a workspace the caller is not a member of, leaking nothing', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/usage'), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('GET', '/api/v1/usage', { token: 'wat_not-a-token' }), 401, 'UNAUTHORIZED')
      for (const res of [
        await get('', sam, inBooks),
        await get(`?workspace_uuid=${books.uuid}`, sam, {}),
        await get(`?workspace_uuid=${sam.workspaceUuid}`, olga, {}),
      ]) {
        expectErrorBody(res, 404, 'NOT_FOUND', 'Workspace not found')
        const text = JSON.stringify(res.body)
        for (const hidden of [books.uuid, 'Usage Books', sam.workspaceUuid, samAgent.uuid, 'Alpha', '7000'])
          expect(text).not.toContain(hidden)
      }
      // Sam's own workspace shows Sam's usage only.
      const sams = await ok('?group_by=agent', sam, {})
      expect(sams.data.map((row) => row.agent.uuid)).toEqual([samAgent.uuid])
      expect(sams.meta.totals).toMatchObject({ runs: 1, total_tokens: 14000, cost: 1.5 })
      // workspace_uuid in the query selects the workspace like the header.
      expect((await ok(`?workspace_uuid=${books.uuid}`, olga, {})).meta.totals).toEqual(totalsOf(all))
    })
  })

  describe('budgets CRUD', () => {
    let team: { uuid: string; name: string }
    let inTeam: Record<string, string>
    let teamAgent: { uuid: string; name: string }
    let otherTeamAgent: { uuid: string; name: string }
    let samAgent: { uuid: string; name: string }
    let olgaPrimaryAgent: { uuid: string; name: string }
    let olgaTeamToken: { uuid: string; token: string }
    let olgaFreeToken: { uuid: string; token: string }
    let olgaPrimaryToken: { uuid: string; token: string }
    let miaToken: { uuid: string; token: string }
    let samToken: { uuid: string; token: string }
    let samBudget: { uuid: string; name: string }
    let olgaPrimaryBudget: { uuid: string; name: string }
    let reader: { token: string }
    let made = 0
    const BASE = { scope: 'workspace', period: 'month', limit_tokens: 1000 }

    const post = (body: unknown, user: { token: string } = olga, headers: Record<string, string> = inTeam) =>
      t.http('POST', '/api/v1/budgets', { token: user.token, headers, body })
    const put = (uuid: string, body: unknown, user: { token: string } = olga, headers: Record<string, string> = inTeam) =>
      t.http('PUT', `/api/v1/budgets/${uuid}`, { token: user.token, headers, body })
    const getOne = (uuid: string, user: { token: string } = olga, headers: Record<string, string> = inTeam) =>
      t.http('GET', `/api/v1/budgets/${uuid}`, { token: user.token, headers })
    const del = (uuid: string, user: { token: string } = olga, headers: Record<string, string> = inTeam) =>
      t.http('DELETE', `/api/v1/budgets/${uuid}`, { token: user.token, headers })
    /** A budget of the team, created over REST (201 required). */
    const create = async (body: Record<string, unknown> = {}, user: { token: string } = olga, headers: Record<string, string> = inTeam) => {
      made += 1
      const res = await post({ name: `Budget ${made}`, ...BASE, ...body }, user, headers)
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      return res.body.data as Record<string, any> & { uuid: string; name: string }
    }
    const stored = async (uuid: string) =>
      (
        await t.sql(
          `select b.name, b.scope, b.agent_id::float8 as agent_id, b.user_id, b.access_token_id::float8 as access_token_id, b.period, b.limit_cost::text as limit_cost,
             b.limit_tokens::float8 as limit_tokens, b.action, b.alert_thresholds, b.is_active, w.uuid as workspace_uuid
           from budgets b join workspaces w on w.id = b.workspace_id where b.uuid = ?`,
          [uuid],
        )
      )[0]
    const countTeamBudgets = async () =>
      Number(
        (
          await t.sql('select count(*)::int as n from budgets where workspace_id = (select id from workspaces where uuid = ?)', [team.uuid])
        )[0].n,
      )

    beforeAll(async () => {
      team = await t.make.workspace(olga, { name: 'Budget Team' })
      inTeam = inWs(team.uuid)
      await t.make.member(team, olga, adam, 'admin')
      await t.make.member(team, olga, mia, 'member')
      teamAgent = await makeAgent(olga, 'Team agent', inTeam)
      otherTeamAgent = await makeAgent(adam, 'Second agent', inTeam)
      samAgent = await makeAgent(sam, 'Sam agent')
      olgaPrimaryAgent = await makeAgent(olga, 'Olga primary agent')
      olgaTeamToken = await makeToken(olga, 'team-bound', team.uuid)
      olgaFreeToken = await makeToken(olga, 'unbound')
      olgaPrimaryToken = await makeToken(olga, 'primary-bound', olga.workspaceUuid)
      miaToken = await makeToken(mia, 'mia-unbound')
      samToken = await makeToken(sam, 'sam-token')
      const samRes = await post({ name: 'Sam secret budget', ...BASE }, sam, {})
      expect(samRes.status).toBe(201)
      samBudget = samRes.body.data
      const primaryRes = await post({ name: 'Olga primary budget', ...BASE }, olga, {})
      expect(primaryRes.status).toBe(201)
      olgaPrimaryBudget = primaryRes.body.data
      reader = await readOnlyToken(t, olga)
    })

    describe('POST /api/v1/budgets', () => {
      it('answers 201 with exactly the Budget shape, defaults applied, and stores it in the workspace', async () => {
        const { month } = periodsNow()
        const before = Date.now()
        const res = await post({ name: 'Team month', scope: 'workspace', period: 'month', limit_cost: 12.5 })
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        expect(Object.keys(res.body)).toEqual(['data'])
        expect(Object.keys(res.body.data).sort()).toEqual(BUDGET_KEYS)
        expect(res.body.data).toEqual({
          uuid: expect.stringMatching(UUID),
          name: 'Team month',
          scope: 'workspace',
          agent_uuid: null,
          user_id: null,
          access_token_uuid: null,
          period: 'month',
          limit_cost: 12.5,
          limit_tokens: null,
          action: 'block',
          alert_thresholds: [80, 100],
          is_active: true,
          spent_cost: 0,
          spent_tokens: 0,
          remaining_cost: 12.5,
          remaining_tokens: null,
          period_start: new Date(month[0]).toISOString(),
          period_end: new Date(month[1]).toISOString(),
          exceeded: false,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        })
        expect(Date.parse(res.body.data.created_at)).toBeGreaterThanOrEqual(before - 2000)
        expect(await stored(res.body.data.uuid)).toMatchObject({
          name: 'Team month',
          scope: 'workspace',
          agent_id: null,
          user_id: null,
          access_token_id: null,
          limit_cost: '12.500000',
          limit_tokens: null,
          action: 'block',
          alert_thresholds: [80, 100],
          is_active: true,
          workspace_uuid: team.uuid,
        })
      })

      it('creates every scope with its target, the other targets null, and every explicit field kept', async () => {
        const agent = await create({
          scope: 'agent',
          agent_uuid: teamAgent.uuid,
          period: 'day',
          action: 'notify',
          alert_thresholds: [1, 2, 3, 4, 100],
          is_active: false,
          limit_cost: 0.000001,
          limit_tokens: 9007199254740991,
        })
        expect(agent).toMatchObject({
          scope: 'agent',
          agent_uuid: teamAgent.uuid,
          user_id: null,
          access_token_uuid: null,
          period: 'day',
          action: 'notify',
          alert_thresholds: [1, 2, 3, 4, 100],
          is_active: false,
          limit_cost: 0.000001,
          limit_tokens: 9007199254740991,
          remaining_tokens: 9007199254740991,
        })
        const user = await create({ scope: 'user', user_id: mia.id, period: 'week', agent_uuid: null, access_token_uuid: null })
        expect(user).toMatchObject({ scope: 'user', user_id: mia.id, agent_uuid: null, access_token_uuid: null, period: 'week' })
        for (const token of [olgaTeamToken, olgaFreeToken, miaToken]) {
          const budget = await create({
            scope: 'access_token',
            access_token_uuid: token.uuid,
            period: 'total',
            limit_cost: 100_000_000_000,
          })
          expect(budget).toMatchObject({
            scope: 'access_token',
            access_token_uuid: token.uuid,
            agent_uuid: null,
            user_id: null,
            period_start: null,
            period_end: null,
            limit_cost: 100_000_000_000,
            remaining_cost: 100_000_000_000,
          })
        }
        expect((await create({ name: 'n'.repeat(255), limit_cost: 12.345678, limit_tokens: null })).limit_cost).toBe(12.345678)
        expect(await stored(agent.uuid)).toMatchObject({ agent_id: expect.any(Number), user_id: null, access_token_id: null })
      })

      it.each([
        ['a missing name', { name: undefined }, 'name'],
        ['an empty name', { name: '' }, 'name'],
        ['a blank name', { name: '   ' }, 'name'],
        ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
        ['a name that is a number', { name: 5 }, 'name'],
        ['a missing scope', { scope: undefined }, 'scope'],
        ['an unknown scope', { scope: 'team' }, 'scope'],
        ['scope agent without agent_uuid', { scope: 'agent' }, 'agent_uuid'],
        ['scope agent with agent_uuid null', { scope: 'agent', agent_uuid: null }, 'agent_uuid'],
        ['scope user without user_id', { scope: 'user' }, 'user_id'],
        ['scope access_token without access_token_uuid', { scope: 'access_token' }, 'access_token_uuid'],
        ['scope workspace with agent_uuid', { agent_uuid: UNKNOWN_UUID }, 'agent_uuid'],
        ['scope workspace with user_id', { user_id: 1 }, 'user_id'],
        ['scope agent with user_id', { scope: 'agent', agent_uuid: UNKNOWN_UUID, user_id: 1 }, 'user_id'],
        ['scope user with access_token_uuid', { scope: 'user', user_id: 1, access_token_uuid: UNKNOWN_UUID }, 'access_token_uuid'],
        [
          'scope access_token with agent_uuid',
          { scope: 'access_token', access_token_uuid: UNKNOWN_UUID, agent_uuid: UNKNOWN_UUID },
          'agent_uuid',
        ],
        ['a malformed agent_uuid', { scope: 'agent', agent_uuid: 'agent-1' }, 'agent_uuid'],
        ['a user_id of 0', { scope: 'user', user_id: 0 }, 'user_id'],
        ['a malformed access_token_uuid', { scope: 'access_token', access_token_uuid: 42 }, 'access_token_uuid'],
        ['neither limit', { limit_tokens: undefined }, 'limit_cost'],
        ['both limits null', { limit_tokens: null, limit_cost: null }, 'limit_cost'],
        ['limit_cost 0', { limit_cost: 0 }, 'limit_cost'],
        ['a negative limit_cost', { limit_cost: -1 }, 'limit_cost'],
        ['limit_cost with 7 decimals', { limit_cost: 1.0000001 }, 'limit_cost'],
        ['limit_cost below a millionth', { limit_cost: 0.0000004 }, 'limit_cost'],
        ['limit_tokens 0', { limit_tokens: 0 }, 'limit_tokens'],
        ['a negative limit_tokens', { limit_tokens: -5 }, 'limit_tokens'],
        ['a non-integer limit_tokens', { limit_tokens: 10.5 }, 'limit_tokens'],
        ['an unknown action', { action: 'warn' }, 'action'],
        ['alert_thresholds empty', { alert_thresholds: [] }, 'alert_thresholds'],
        ['six alert_thresholds', { alert_thresholds: [10, 20, 30, 40, 50, 60] }, 'alert_thresholds'],
        ['duplicate alert_thresholds', { alert_thresholds: [50, 80, 50] }, 'alert_thresholds'],
        ['an alert threshold of 0', { alert_thresholds: [0, 80] }, 'alert_thresholds'],
        ['an alert threshold of 101', { alert_thresholds: [101] }, 'alert_thresholds'],
        ['a non-integer alert threshold', { alert_thresholds: [80.5] }, 'alert_thresholds'],
        ['alert_thresholds not an array', { alert_thresholds: 80 }, 'alert_thresholds'],
        ['a missing period', { period: undefined }, 'period'],
        ['an unknown period', { period: 'year' }, 'period'],
        ['an unknown field', { color: 'red' }, 'color'],
        ['a spent_tokens in the body', { spent_tokens: 0 }, 'spent_tokens'],
      ])('answers 400 naming the field for %s, storing nothing', async (_label, change, field) => {
        const before = await countTeamBudgets()
        const res = await post({ name: 'Invalid', ...BASE, ...change })
        expectErrorBody(res, 400, 'BAD_REQUEST', VALIDATION_MESSAGE)
        expectNamed(res, field)
        expect(await countTeamBudgets()).toBe(before)
      })

      // The body's numbers and booleans are JSON's own: REST coerces top-level query values, never these (src/access/wire.ts).
      it.each([
        ['a user_id that is a string', { scope: 'user', user_id: '<olga id>' }, 'user_id'],
        ['limit_cost as a string', { limit_cost: '5' }, 'limit_cost'],
        ['limit_tokens as a string', { limit_tokens: '100' }, 'limit_tokens'],
        ['limit_tokens as a boolean', { limit_tokens: true }, 'limit_tokens'],
        ['is_active as the string "false"', { is_active: 'false' }, 'is_active'],
      ])('answers 400 naming the field for %s, storing nothing', async (_label, change, field) => {
        const before = await countTeamBudgets()
        const body = JSON.parse(
          JSON.stringify({ name: 'Coerced', ...BASE, ...change }).replace('"<olga id>"', JSON.stringify(String(olga.id))),
        )
        const res = await post(body)
        if (res.status === 201) await del(res.body.data.uuid)
        expectNamed(res, field)
        expect(await countTeamBudgets()).toBe(before)
      })

      it.each([
        ['an agent of another workspace', () => ({ scope: 'agent', agent_uuid: samAgent.uuid }), 'agent_uuid'],
        ['an agent of the same owner in another workspace', () => ({ scope: 'agent', agent_uuid: olgaPrimaryAgent.uuid }), 'agent_uuid'],
        ['an unknown agent', () => ({ scope: 'agent', agent_uuid: UNKNOWN_UUID }), 'agent_uuid'],
        ['a user who is not a member', () => ({ scope: 'user', user_id: sam.id }), 'user_id'],
        ['an unknown user', () => ({ scope: 'user', user_id: 2_000_000_000 }), 'user_id'],
        ['a token of a non-member', () => ({ scope: 'access_token', access_token_uuid: samToken.uuid }), 'access_token_uuid'],
        [
          'a token of a member bound to another workspace',
          () => ({ scope: 'access_token', access_token_uuid: olgaPrimaryToken.uuid }),
          'access_token_uuid',
        ],
        ['an unknown token', () => ({ scope: 'access_token', access_token_uuid: UNKNOWN_UUID }), 'access_token_uuid'],
      ])('answers 400 naming the field for %s, revealing nothing of it', async (_label, body, field) => {
        const target = body()
        const before = await countTeamBudgets()
        const res = await post({ name: 'Foreign target', ...BASE, ...target })
        expectErrorBody(res, 400, 'BAD_REQUEST', VALIDATION_MESSAGE)
        expectNamed(res, field)
        expect(JSON.stringify(res.body)).not.toMatch(/Sam|Olga primary|sam-token|primary-bound/)
        expect(await countTeamBudgets()).toBe(before)
      })

      it('words a foreign target as an unknown one', async () => {
        const foreign = await post({ name: 'x', ...BASE, scope: 'agent', agent_uuid: samAgent.uuid })
        const unknown = await post({ name: 'x', ...BASE, scope: 'agent', agent_uuid: UNKNOWN_UUID })
        expect(foreign.body.issues).toEqual(unknown.body.issues)
        expect(foreign.body.message).toBe(unknown.body.message)
        const foreignToken = await post({ name: 'x', ...BASE, scope: 'access_token', access_token_uuid: samToken.uuid })
        const unknownToken = await post({ name: 'x', ...BASE, scope: 'access_token', access_token_uuid: UNKNOWN_UUID })
        expect(foreignToken.body.issues).toEqual(unknownToken.body.issues)
      })

      it('lets an admin create; refuses a member and a read-only token with 403; 401 without a token', async () => {
        const byAdmin = await post({ name: 'By admin', ...BASE }, adam)
        expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(201)
        const before = await countTeamBudgets()
        expectErrorBody(await post({ name: 'By member', ...BASE }, mia), 403, 'FORBIDDEN')
        expectErrorBody(await post({ name: 'By reader', ...BASE }, reader), 403, 'FORBIDDEN')
        expectErrorBody(
          await t.http('POST', '/api/v1/budgets', { headers: inTeam, body: { name: 'Anonymous', ...BASE } }),
          401,
          'UNAUTHORIZED',
        )
        expect(await countTeamBudgets()).toBe(before)
        expectErrorBody(await post({ name: 'Elsewhere', ...BASE }, sam), 404, 'NOT_FOUND', 'Workspace not found')
        expectErrorBody(
          await post({ name: 'Elsewhere', ...BASE, workspace_uuid: team.uuid }, sam, {}),
          404,
          'NOT_FOUND',
          'Workspace not found',
        )
        expect(await countTeamBudgets()).toBe(before)
      })
    })

    describe('GET /api/v1/budgets', () => {
      it('answers the paginator shape, paged and sorted, filtered by scope, to every member', async () => {
        const list = await t.http('GET', '/api/v1/budgets?per_page=100', { token: mia.token, headers: inTeam })
        expect(list.status, JSON.stringify(list.body)).toBe(200)
        expect(Object.keys(list.body).sort()).toEqual(['data', 'links', 'meta'])
        const total = await countTeamBudgets()
        expect(list.body.meta).toMatchObject({ current_page: 1, from: total ? 1 : null, last_page: 1, per_page: 100, to: total, total })
        for (const budget of list.body.data) expect(Object.keys(budget).sort()).toEqual(BUDGET_KEYS)
        const uuids = list.body.data.map((budget: { uuid: string }) => budget.uuid)
        expect(uuids).not.toContain(samBudget.uuid)
        expect(uuids).not.toContain(olgaPrimaryBudget.uuid)
        const createdOrder = await t.sql(
          'select uuid from budgets where workspace_id = (select id from workspaces where uuid = ?) order by created_at, id',
          [team.uuid],
        )
        expect(uuids).toEqual(createdOrder.map((row) => row.uuid))

        const a = await create({ name: 'zz list c' })
        const b = await create({ name: 'zz list a' })
        const c = await create({ name: 'zz list b', scope: 'user', user_id: adam.id })
        const path = `${t.config.appUrl}/api/v1/budgets`
        const newest = await t.http('GET', '/api/v1/budgets?sort=-created_at&per_page=2&page=1', { token: olga.token, headers: inTeam })
        expect(newest.body.data.map((x: { uuid: string }) => x.uuid)).toEqual([c.uuid, b.uuid])
        expect(newest.body.links).toEqual({
          first: `${path}?sort=-created_at&page=1&per_page=2`,
          last: `${path}?sort=-created_at&page=${Math.ceil((total + 3) / 2)}&per_page=2`,
          prev: null,
          next: `${path}?sort=-created_at&page=2&per_page=2`,
        })
        expect(newest.body.meta).toEqual({
          current_page: 1,
          from: 1,
          last_page: Math.ceil((total + 3) / 2),
          path,
          per_page: 2,
          to: 2,
          total: total + 3,
        })
        const byName = await t.http('GET', '/api/v1/budgets?sort=-name&per_page=3', { token: adam.token, headers: inTeam })
        expect(byName.body.data.map((x: { uuid: string }) => x.uuid)).toEqual([a.uuid, c.uuid, b.uuid])
        const users = await t.http('GET', '/api/v1/budgets?scope=user&per_page=100', { token: olga.token, headers: inTeam })
        expect(users.body.data.length).toBeGreaterThan(0)
        expect(users.body.data.every((x: { scope: string }) => x.scope === 'user')).toBe(true)
        expect(users.body.data.map((x: { uuid: string }) => x.uuid)).toContain(c.uuid)
        expect(users.body.links.first).toBe(`${path}?sort=created_at&scope=user&page=1&per_page=100`)
        const readerList = await t.http('GET', '/api/v1/budgets', { token: reader.token, headers: inTeam })
        expect(readerList.status).toBe(200)
        const viaTrpc = await t.as(mia, inTeam).budgets.list({ scope: 'user', per_page: 100 })
        expect(viaTrpc.data.map((x) => x.uuid)).toEqual(users.body.data.map((x: { uuid: string }) => x.uuid))
      })

      it.each([
        ['an unknown scope', 'scope=team', 'scope'],
        ['an unknown sort', 'sort=spent_tokens', 'sort'],
        ['page 0', 'page=0', 'page'],
        ['per_page over 100', 'per_page=101', 'per_page'],
        ['an unknown parameter', 'period=day', 'period'],
      ])('answers 400 naming the field for %s', async (_label, query, field) => {
        expectNamed(await t.http('GET', `/api/v1/budgets?${query}`, { token: olga.token, headers: inTeam }), field)
      })

      it('answers 401 without a token and 404 in a workspace the caller is not a member of', async () => {
        expectErrorBody(await t.http('GET', '/api/v1/budgets', { headers: inTeam }), 401, 'UNAUTHORIZED')
        const res = await t.http('GET', '/api/v1/budgets', { token: sam.token, headers: inTeam })
        expectErrorBody(res, 404, 'NOT_FOUND', 'Workspace not found')
        expect(JSON.stringify(res.body)).not.toContain('Budget')
      })
    })

    describe('GET /api/v1/budgets/{budget_uuid}', () => {
      it('answers the budget to every member, as the list shows it', async () => {
        const budget = await create({ name: 'Readable', scope: 'agent', agent_uuid: teamAgent.uuid, limit_cost: 3 })
        for (const user of [olga, adam, mia]) {
          const res = await getOne(budget.uuid, user)
          expect(res.status, JSON.stringify(res.body)).toBe(200)
          expect(Object.keys(res.body)).toEqual(['data'])
          expect(res.body.data).toEqual(budget)
        }
        expect((await getOne(budget.uuid, reader)).body.data).toEqual(budget)
        expect((await t.as(mia, inTeam).budgets.retrieve({ budget_uuid: budget.uuid })).data).toEqual(budget)
        const listed = await t.http('GET', '/api/v1/budgets?per_page=100', { token: olga.token, headers: inTeam })
        expect(listed.body.data.find((x: { uuid: string }) => x.uuid === budget.uuid)).toEqual(budget)
      })

      it('answers 404 for another tenant’s budget and for one of another workspace of the caller, never their data', async () => {
        expectHiddenBudget(await getOne(samBudget.uuid), samBudget)
        expectHiddenBudget(await getOne(samBudget.uuid, olga, {}), samBudget)
        expectHiddenBudget(await getOne(olgaPrimaryBudget.uuid), olgaPrimaryBudget)
        expectHiddenBudget(await getOne(UNKNOWN_UUID), { uuid: UNKNOWN_UUID, name: 'x'.repeat(20) })
        const elsewhere = await getOne(samBudget.uuid, olga, inWs(sam.workspaceUuid))
        expectErrorBody(elsewhere, 404, 'NOT_FOUND', 'Workspace not found')
        expect(JSON.stringify(elsewhere.body)).not.toContain(samBudget.name)
        expect((await getOne(samBudget.uuid, sam, {})).status).toBe(200)
        expectNamed(await getOne('0190a8f0-0000'), 'budget_uuid')
        expectErrorBody(await t.http('GET', `/api/v1/budgets/${samBudget.uuid}`), 401, 'UNAUTHORIZED')
      })
    })

    describe('PUT /api/v1/budgets/{budget_uuid}', () => {
      it('changes only the fields given and answers the whole budget', async () => {
        const budget = await create({ name: 'Partial', limit_cost: 10, alert_thresholds: [50] })
        const res = await put(budget.uuid, { name: 'Renamed' })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        expect(Object.keys(res.body.data).sort()).toEqual(BUDGET_KEYS)
        expect(res.body.data).toEqual({ ...budget, name: 'Renamed', updated_at: res.body.data.updated_at })
        expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(budget.updated_at))
        const more = await put(budget.uuid, {
          period: 'week',
          action: 'notify',
          alert_thresholds: [10, 90],
          is_active: false,
          limit_tokens: null,
          limit_cost: 2.5,
        })
        expect(more.status, JSON.stringify(more.body)).toBe(200)
        const { week } = periodsNow()
        expect(more.body.data).toMatchObject({
          name: 'Renamed',
          scope: 'workspace',
          period: 'week',
          period_start: new Date(week[0]).toISOString(),
          period_end: new Date(week[1]).toISOString(),
          action: 'notify',
          alert_thresholds: [10, 90],
          is_active: false,
          limit_tokens: null,
          remaining_tokens: null,
          limit_cost: 2.5,
          remaining_cost: 2.5,
        })
        expect(await stored(budget.uuid)).toMatchObject({
          name: 'Renamed',
          period: 'week',
          limit_tokens: null,
          limit_cost: '2.500000',
          is_active: false,
        })
        const unchanged = await put(budget.uuid, {})
        expect(unchanged.body.data).toEqual({ ...more.body.data, updated_at: unchanged.body.data.updated_at })
        expect((await getOne(budget.uuid)).body.data).toEqual(unchanged.body.data)
      })

      it('needs the new scope’s target when the scope changes, and drops the old one', async () => {
        const budget = await create({ name: 'Rescoped' })
        expectNamed(await put(budget.uuid, { scope: 'agent' }), 'agent_uuid')
        expectNamed(await put(budget.uuid, { scope: 'user' }), 'user_id')
        expectNamed(await put(budget.uuid, { scope: 'access_token' }), 'access_token_uuid')
        expect(await stored(budget.uuid)).toMatchObject({ scope: 'workspace', agent_id: null })
        const toAgent = await put(budget.uuid, { scope: 'agent', agent_uuid: teamAgent.uuid })
        expect(toAgent.status, JSON.stringify(toAgent.body)).toBe(200)
        expect(toAgent.body.data).toMatchObject({ scope: 'agent', agent_uuid: teamAgent.uuid, user_id: null, access_token_uuid: null })
        const otherAgent = await put(budget.uuid, { agent_uuid: otherTeamAgent.uuid })
        expect(otherAgent.body.data).toMatchObject({ scope: 'agent', agent_uuid: otherTeamAgent.uuid })
        const toUser = await put(budget.uuid, { scope: 'user', user_id: mia.id })
        expect(toUser.body.data).toMatchObject({ scope: 'user', user_id: mia.id, agent_uuid: null, access_token_uuid: null })
        expect(await stored(budget.uuid)).toMatchObject({ scope: 'user', user_id: mia.id, agent_id: null })
        const toToken = await put(budget.uuid, { scope: 'access_token', access_token_uuid: miaToken.uuid })
        expect(toToken.body.data).toMatchObject({ scope: 'access_token', access_token_uuid: miaToken.uuid, user_id: null })
        const back = await put(budget.uuid, { scope: 'workspace' })
        expect(back.status, JSON.stringify(back.body)).toBe(200)
        expect(back.body.data).toMatchObject({ scope: 'workspace', agent_uuid: null, user_id: null, access_token_uuid: null })
        expect(await stored(budget.uuid)).toMatchObject({ scope: 'workspace', agent_id: null, user_id: null, access_token_id: null })
      })

      it('re-validates the merged budget: a target the scope does not use, no limit left', async () => {
        const budget = await create({ name: 'Merged', limit_tokens: 500 })
        expectNamed(await put(budget.uuid, { user_id: mia.id }), 'user_id')
        expectNamed(await put(budget.uuid, { agent_uuid: teamAgent.uuid }), 'agent_uuid')
        expectNamed(await put(budget.uuid, { limit_tokens: null }), 'limit_cost')
        const agentBudget = await create({ name: 'Merged agent', scope: 'agent', agent_uuid: teamAgent.uuid })
        expectNamed(await put(agentBudget.uuid, { agent_uuid: null }), 'agent_uuid')
        expectNamed(await put(agentBudget.uuid, { scope: 'user', user_id: mia.id, agent_uuid: teamAgent.uuid }), 'agent_uuid')
        expect(await stored(budget.uuid)).toMatchObject({ scope: 'workspace', user_id: null, agent_id: null, limit_tokens: 500 })
        expect(await stored(agentBudget.uuid)).toMatchObject({ scope: 'agent', agent_id: expect.any(Number) })
        const swapped = await put(budget.uuid, { limit_tokens: null, limit_cost: 4 })
        expect(swapped.status, JSON.stringify(swapped.body)).toBe(200)
        expect(swapped.body.data).toMatchObject({ limit_tokens: null, limit_cost: 4 })
      })

      it.each([
        ['an empty name', { name: '' }, 'name'],
        ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
        ['a null name', { name: null }, 'name'],
        ['an unknown scope', { scope: 'everyone' }, 'scope'],
        ['an unknown period', { period: 'quarter' }, 'period'],
        ['limit_cost 0', { limit_cost: 0 }, 'limit_cost'],
        ['limit_cost with 7 decimals', { limit_cost: 0.1234567 }, 'limit_cost'],
        ['limit_tokens 0', { limit_tokens: 0 }, 'limit_tokens'],
        ['a non-integer limit_tokens', { limit_tokens: 2.5 }, 'limit_tokens'],
        ['an unknown action', { action: 'stop' }, 'action'],
        ['alert_thresholds empty', { alert_thresholds: [] }, 'alert_thresholds'],
        ['duplicate alert_thresholds', { alert_thresholds: [80, 80] }, 'alert_thresholds'],
        ['an alert threshold of 101', { alert_thresholds: [101] }, 'alert_thresholds'],
        ['an unknown field', { spent_cost: 1 }, 'spent_cost'],
        ['a target of another workspace', { scope: 'agent', agent_uuid: '<sam agent>' }, 'agent_uuid'],
        ['a user who is not a member', { scope: 'user', user_id: '<sam id>' }, 'user_id'],
        ['a token bound to another workspace', { scope: 'access_token', access_token_uuid: '<primary token>' }, 'access_token_uuid'],
      ])('answers 400 naming the field for %s, changing nothing', async (_label, raw, field) => {
        const budget = await create({ name: 'Unchanged' })
        const body = JSON.parse(
          JSON.stringify(raw)
            .replace('"<sam agent>"', JSON.stringify(samAgent.uuid))
            .replace('"<sam id>"', String(sam.id))
            .replace('"<primary token>"', JSON.stringify(olgaPrimaryToken.uuid)),
        )
        const res = await put(budget.uuid, body)
        expectErrorBody(res, 400, 'BAD_REQUEST', VALIDATION_MESSAGE)
        expectNamed(res, field)
        expect((await getOne(budget.uuid)).body.data).toEqual(budget)
      })

      it('answers 400 naming is_active for the string "false", changing nothing', async () => {
        const budget = await create({ name: 'Stays active', is_active: true })
        const res = await put(budget.uuid, { is_active: 'false' })
        expectNamed(res, 'is_active')
        expect((await getOne(budget.uuid)).body.data).toEqual(budget)
      })

      it('lets an admin change; refuses a member and a read-only token with 403; 404 for another tenant’s budget; 401 without a token', async () => {
        const budget = await create({ name: 'Guarded' })
        const byAdmin = await put(budget.uuid, { name: 'Guarded by admin' }, adam)
        expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(200)
        expectErrorBody(await put(budget.uuid, { name: 'By member' }, mia), 403, 'FORBIDDEN')
        expectErrorBody(await put(budget.uuid, { name: 'By reader' }, reader), 403, 'FORBIDDEN')
        expectErrorBody(
          await t.http('PUT', `/api/v1/budgets/${budget.uuid}`, { headers: inTeam, body: { name: 'Anonymous' } }),
          401,
          'UNAUTHORIZED',
        )
        expect((await stored(budget.uuid)).name).toBe('Guarded by admin')
        expectHiddenBudget(await put(samBudget.uuid, { name: 'Hijacked' }), samBudget)
        expectHiddenBudget(await put(samBudget.uuid, { name: 'Hijacked' }, olga, {}), samBudget)
        expectHiddenBudget(await put(olgaPrimaryBudget.uuid, { name: 'Moved' }), olgaPrimaryBudget)
        expectErrorBody(
          await put(samBudget.uuid, { name: 'Hijacked' }, olga, inWs(sam.workspaceUuid)),
          404,
          'NOT_FOUND',
          'Workspace not found',
        )
        expect((await stored(samBudget.uuid)).name).toBe('Sam secret budget')
        expect((await stored(olgaPrimaryBudget.uuid)).name).toBe('Olga primary budget')
        expectNamed(await put('0190a8f0-0000', { name: 'x' }), 'budget_uuid')
      })
    })

    describe('DELETE /api/v1/budgets/{budget_uuid}', () => {
      it('deletes: 204 without a body, then 404 on every operation', async () => {
        const budget = await create({ name: 'Doomed budget' })
        const res = await del(budget.uuid, adam)
        expect(res.status, JSON.stringify(res.body)).toBe(204)
        expect(res.body).toBeNull()
        expect(await stored(budget.uuid)).toBeUndefined()
        expectHiddenBudget(await getOne(budget.uuid), budget)
        expectHiddenBudget(await put(budget.uuid, { name: 'Back' }), budget)
        expectHiddenBudget(await del(budget.uuid), budget)
        const listed = await t.http('GET', '/api/v1/budgets?per_page=100', { token: olga.token, headers: inTeam })
        expect(listed.body.data.map((x: { uuid: string }) => x.uuid)).not.toContain(budget.uuid)
      })

      it('refuses a member and a read-only token with 403; 404 for another tenant’s budget; 401 without a token; keeps them all', async () => {
        const budget = await create({ name: 'Kept budget' })
        expectErrorBody(await del(budget.uuid, mia), 403, 'FORBIDDEN')
        expectErrorBody(await del(budget.uuid, reader), 403, 'FORBIDDEN')
        expectErrorBody(await t.http('DELETE', `/api/v1/budgets/${budget.uuid}`, { headers: inTeam }), 401, 'UNAUTHORIZED')
        expectHiddenBudget(await del(samBudget.uuid), samBudget)
        expectHiddenBudget(await del(samBudget.uuid, olga, {}), samBudget)
        expectHiddenBudget(await del(olgaPrimaryBudget.uuid), olgaPrimaryBudget)
        expectErrorBody(await del(samBudget.uuid, olga, inWs(sam.workspaceUuid)), 404, 'NOT_FOUND', 'Workspace not found')
        for (const uuid of [budget.uuid, samBudget.uuid, olgaPrimaryBudget.uuid]) expect(await stored(uuid)).toBeDefined()
        expectNamed(await del('0190a8f0-0000'), 'budget_uuid')
      })
    })
  })

  describe('live spend', () => {
    it('computes spend, remaining and exceeded for day, week (from Monday), month and total from the runs, including runs before the budget', async () => {
      const pat = await t.make.user({ name: 'Pat Periods' })
      const ws = pat.workspaceUuid
      const agent = await makeAgent(pat, 'Counter')
      const periods = periodsNow()
      const other = await t.make.workspace(pat, { name: 'Pat side' })
      await runAgent(pat.token, agent.uuid, { prompt_tokens: 100, completion_tokens: 20 })
      const at = (ms: number) => new Date(ms).toISOString()
      await insertRun({
        workspace: ws,
        at: at(periods.week[0] + 1000),
        userId: pat.id,
        agentUuid: agent.uuid,
        prompt: 600,
        completion: 400,
        cost: '0.001',
      })
      await insertRun({
        workspace: ws,
        at: at(periods.month[0] + 1000),
        userId: pat.id,
        agentUuid: agent.uuid,
        prompt: 6000,
        completion: 4000,
        cost: '0.01',
      })
      await insertRun({
        workspace: ws,
        at: at(Date.now() - 40 * DAY_MS),
        userId: pat.id,
        agentUuid: agent.uuid,
        prompt: 60000,
        completion: 40000,
        cost: '0.1',
      })
      await insertRun({
        workspace: ws,
        at: '2000-01-03T12:00:00Z',
        userId: pat.id,
        agentUuid: null,
        kind: 'prompt',
        prompt: 600000,
        completion: 400000,
        cost: '1',
      })
      await insertRun({ workspace: other.uuid, at: at(Date.now()), userId: pat.id, prompt: 3, completion: 4, cost: '0.5' })

      const spendOf = async (period: keyof typeof periods) => {
        const [from, to] = periods[period]
        const runs = (await storedRuns(ws)).filter((run) => run.createdMs >= from && run.createdMs < to)
        return { tokens: runs.reduce((sum, run) => sum + run.total, 0), micro: runs.reduce((sum, run) => sum + run.micro, 0) }
      }
      const day = await spendOf('day')
      const week = await spendOf('week')
      const month = await spendOf('month')
      const total = await spendOf('total')
      expect(day.tokens).toBeGreaterThanOrEqual(120)
      expect(total.tokens).toBe(1_111_120)
      expect(week.tokens).toBeGreaterThanOrEqual(1120)
      expect(month.tokens).toBeGreaterThanOrEqual(11_120)

      const post = async (body: Record<string, unknown>) => {
        const res = await t.http('POST', '/api/v1/budgets', { token: pat.token, body: { scope: 'workspace', action: 'notify', ...body } })
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        return res.body.data
      }
      const b = {
        day: await post({ name: 'Day', period: 'day', limit_tokens: day.tokens }),
        week: await post({ name: 'Week', period: 'week', limit_tokens: week.tokens + 1, limit_cost: 1000 }),
        month: await post({ name: 'Month', period: 'month', limit_cost: month.micro / 1e6 }),
        total: await post({ name: 'Total', period: 'total', limit_tokens: 5_000_000 }),
      }
      expect(b.day).toMatchObject({
        spent_tokens: day.tokens,
        spent_cost: day.micro / 1e6,
        remaining_tokens: 0,
        remaining_cost: null,
        exceeded: true,
        period_start: at(periods.day[0]),
        period_end: at(periods.day[1]),
      })
      expect(b.week).toMatchObject({
        spent_tokens: week.tokens,
        spent_cost: week.micro / 1e6,
        remaining_tokens: 1,
        remaining_cost: (1000 * 1e6 - week.micro) / 1e6,
        exceeded: false,
        period_start: at(periods.week[0]),
        period_end: at(periods.week[1]),
      })
      expect(new Date(b.week.period_start).getUTCDay()).toBe(1)
      expect(b.month).toMatchObject({
        spent_tokens: month.tokens,
        spent_cost: month.micro / 1e6,
        remaining_cost: 0,
        remaining_tokens: null,
        exceeded: true,
        period_start: at(periods.month[0]),
        period_end: at(periods.month[1]),
      })
      expect(b.total).toMatchObject({
        spent_tokens: 1_111_120,
        spent_cost: total.micro / 1e6,
        remaining_tokens: 5_000_000 - 1_111_120,
        exceeded: false,
        period_start: null,
        period_end: null,
      })

      // Spend is live: one more run shows on every budget at once, and remaining never goes below 0.
      await runAgent(pat.token, agent.uuid, { prompt_tokens: 50, completion_tokens: 10 })
      const [last] = await t.sql(
        'select total_tokens, cost::text as cost from runs where workspace_id = (select id from workspaces where uuid = ?) order by id desc limit 1',
        [ws],
      )
      expect(Number(last.total_tokens)).toBe(60)
      const lastMicro = Math.round(Number(last.cost) * 1e6)
      const read = async (uuid: string) => (await t.http('GET', `/api/v1/budgets/${uuid}`, { token: pat.token })).body.data
      expect(await read(b.day.uuid)).toMatchObject({
        spent_tokens: day.tokens + 60,
        spent_cost: (day.micro + lastMicro) / 1e6,
        remaining_tokens: 0,
        exceeded: true,
      })
      expect(await read(b.week.uuid)).toMatchObject({ spent_tokens: week.tokens + 60, remaining_tokens: 0, exceeded: true })
      expect(await read(b.month.uuid)).toMatchObject({ spent_tokens: month.tokens + 60, remaining_cost: 0, exceeded: true })
      expect(await read(b.total.uuid)).toMatchObject({
        spent_tokens: 1_111_180,
        spent_cost: (total.micro + lastMicro) / 1e6,
        remaining_tokens: 5_000_000 - 1_111_180,
      })
      const listed = await t.http('GET', '/api/v1/budgets?sort=name', { token: pat.token })
      expect(listed.body.data.map((x: { name: string; spent_tokens: number }) => [x.name, x.spent_tokens])).toEqual([
        ['Day', day.tokens + 60],
        ['Month', month.tokens + 60],
        ['Total', 1_111_180],
        ['Week', week.tokens + 60],
      ])
      // GET usage counts the same.
      const usage = await t.http('GET', '/api/v1/usage', { token: pat.token })
      expect(usage.body.meta.totals.total_tokens).toBe(1_111_180)
    })

    it('counts only the named user’s runs for a user budget and only the token’s runs for an access-token budget; a revoked token’s budget stays readable', async () => {
      const quinn = await t.make.user({ name: 'Quinn Owner' })
      const rita = await t.make.user({ name: 'Rita Member' })
      const spend = await t.make.workspace(quinn, { name: 'Spend Team' })
      const inSpend = inWs(spend.uuid)
      await t.make.member(spend, quinn, rita, 'member')
      const agent = await makeAgent(quinn, 'Shared', inSpend)
      const bot = await makeToken(quinn, 'deploy-bot', spend.uuid)
      await runAgent(quinn.token, agent.uuid, { prompt_tokens: 10, completion_tokens: 10 }, inSpend)
      await runAgent(rita.token, agent.uuid, { prompt_tokens: 30, completion_tokens: 30 }, inSpend)
      await runAgent(bot.token, agent.uuid, { prompt_tokens: 100, completion_tokens: 100 })
      // Quinn's usage in their primary workspace counts for no budget of the team.
      const own = await makeAgent(quinn, 'Own')
      await runAgent(quinn.token, own.uuid, { prompt_tokens: 1000, completion_tokens: 1000 })
      const [botRun] = await t.sql(
        'select r.total_tokens from runs r join access_tokens tk on tk.id = r.access_token_id where tk.uuid = ?',
        [bot.uuid],
      )
      expect(botRun.total_tokens).toBe(200)

      const post = async (body: Record<string, unknown>) => {
        const res = await t.http('POST', '/api/v1/budgets', {
          token: quinn.token,
          headers: inSpend,
          body: { period: 'day', limit_tokens: 1000, ...body },
        })
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        return res.body.data
      }
      const ritas = await post({ name: 'Rita', scope: 'user', user_id: rita.id })
      const quinns = await post({ name: 'Quinn', scope: 'user', user_id: quinn.id, period: 'total' })
      const bots = await post({ name: 'Bot', scope: 'access_token', access_token_uuid: bot.uuid, period: 'month', limit_tokens: 200 })
      const whole = await post({ name: 'Whole', scope: 'workspace', period: 'week' })
      const agents = await post({ name: 'Agent', scope: 'agent', agent_uuid: agent.uuid })
      expect(ritas).toMatchObject({ spent_tokens: 60, remaining_tokens: 940, exceeded: false })
      expect(quinns).toMatchObject({ spent_tokens: 220, remaining_tokens: 780 })
      expect(bots).toMatchObject({ spent_tokens: 200, remaining_tokens: 0, exceeded: true })
      expect(whole).toMatchObject({ spent_tokens: 280 })
      expect(agents).toMatchObject({ spent_tokens: 280 })
      const costs = await t.sql(
        `select coalesce(sum(cost) filter (where user_id = ?), 0)::text as rita, coalesce(sum(cost) filter (where access_token_id = (select id from access_tokens where uuid = ?)), 0)::text as bot
         from runs where workspace_id = (select id from workspaces where uuid = ?)`,
        [rita.id, bot.uuid, spend.uuid],
      )
      expect(ritas.spent_cost).toBe(Number(Number(costs[0].rita).toFixed(6)))
      expect(bots.spent_cost).toBe(Number(Number(costs[0].bot).toFixed(6)))

      // The budget of the bot's token blocks the bot, not its owner's other tokens.
      const refused = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: bot.token, body: { input: 'Again' } })
      expectErrorBody(refused, 429, 'TOO_MANY_REQUESTS')
      expect(refused.body.message).toContain('"Bot"')
      await runAgent(quinn.token, agent.uuid, { prompt_tokens: 5, completion_tokens: 5 }, inSpend)
      const read = async (uuid: string) => {
        const res = await t.http('GET', `/api/v1/budgets/${uuid}`, { token: rita.token, headers: inSpend })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        return res.body.data
      }
      expect(await read(quinns.uuid)).toMatchObject({ spent_tokens: 230 })
      expect(await read(ritas.uuid)).toMatchObject({ spent_tokens: 60 })
      expect(await read(bots.uuid)).toMatchObject({ spent_tokens: 200 })

      // Revoked: the token no longer authenticates, its budget stays readable with its spend.
      const revoked = await t.http('DELETE', `/api/v1/access-tokens/${bot.uuid}`, { token: quinn.token })
      expect(revoked.status, JSON.stringify(revoked.body)).toBe(204)
      expectErrorBody(await t.http('GET', '/api/v1/user', { token: bot.token }), 401, 'UNAUTHORIZED')
      expect(await read(bots.uuid)).toEqual({ ...bots, updated_at: bots.updated_at })
      const listed = await t.http('GET', '/api/v1/budgets?scope=access_token', { token: quinn.token, headers: inSpend })
      expect(listed.body.data).toEqual([bots])
      const byToken = await t.http('GET', '/api/v1/usage?group_by=access_token', { token: quinn.token, headers: inSpend })
      expect(byToken.body.data.find((row: { access_token: { uuid: string } | null }) => row.access_token?.uuid === bot.uuid)).toMatchObject(
        { runs: 1, total_tokens: 200 },
      )
    })

    it('keeps a soft-deleted agent’s budget readable, and it no longer blocks anything', async () => {
      const dora = await t.make.user({ name: 'Dora Deleter' })
      const doomed = await makeAgent(dora, 'Doomed')
      const survivor = await makeAgent(dora, 'Survivor')
      await runAgent(dora.token, doomed.uuid, { prompt_tokens: 60, completion_tokens: 50 })
      const created = await t.http('POST', '/api/v1/budgets', {
        token: dora.token,
        body: { name: 'Doomed cap', scope: 'agent', agent_uuid: doomed.uuid, period: 'total', limit_tokens: 100 },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const budget = created.body.data
      expect(budget).toMatchObject({ spent_tokens: 110, exceeded: true, action: 'block' })
      const refused = await t.http('POST', `/api/v1/agents/${doomed.uuid}/run`, { token: dora.token, body: { input: 'hi' } })
      expectErrorBody(refused, 429, 'TOO_MANY_REQUESTS')
      expect(refused.headers.get('retry-after')).toBeNull()
      const [ids] = await t.sql('select id::float8 as agent_id, workspace_id::float8 as workspace_id from agents where uuid = ?', [
        doomed.uuid,
      ])
      const scope = { workspaceId: Number(ids.workspace_id), agentId: Number(ids.agent_id), userId: dora.id, accessTokenId: null }
      expect(await budgetRefusal(t.runtime.orm.em.fork(), scope)).not.toBeNull()

      const deleted = await t.http('DELETE', `/api/v1/agents/${doomed.uuid}`, { token: dora.token })
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(204)
      expect((await t.sql('select deleted_at from agents where uuid = ?', [doomed.uuid]))[0].deleted_at).not.toBeNull()
      const read = await t.http('GET', `/api/v1/budgets/${budget.uuid}`, { token: dora.token })
      expect(read.status, JSON.stringify(read.body)).toBe(200)
      expect(read.body.data).toEqual(budget)
      const listed = await t.http('GET', '/api/v1/budgets', { token: dora.token })
      expect(listed.body.data).toEqual([budget])
      expect(await budgetRefusal(t.runtime.orm.em.fork(), scope)).toBeNull()
      await runAgent(dora.token, survivor.uuid, { prompt_tokens: 1, completion_tokens: 1 })
      // Its usage outlives it.
      const usage = await t.http('GET', '/api/v1/usage?group_by=agent', { token: dora.token })
      expect(usage.body.data.map((row: { agent: { name: string }; total_tokens: number }) => [row.agent.name, row.total_tokens])).toEqual([
        ['Doomed', 110],
        ['Survivor', 2],
      ])
      // It stays editable: its unchanged target is kept as stored.
      const paused = await t.http('PUT', `/api/v1/budgets/${budget.uuid}`, {
        token: dora.token,
        body: { name: 'Doomed cap (gone)', is_active: false },
      })
      expect(paused.status, JSON.stringify(paused.body)).toBe(200)
      expect(paused.body.data).toMatchObject({ name: 'Doomed cap (gone)', is_active: false, agent_uuid: doomed.uuid, spent_tokens: 110 })
      // A new budget cannot name it any more.
      const again = await t.http('POST', '/api/v1/budgets', {
        token: dora.token,
        body: { name: 'Too late', scope: 'agent', agent_uuid: doomed.uuid, period: 'total', limit_tokens: 100 },
      })
      expectNamed(again, 'agent_uuid')
      // It can still be deleted.
      expect((await t.http('DELETE', `/api/v1/budgets/${budget.uuid}`, { token: dora.token })).status).toBe(204)
      expect((await t.http('GET', '/api/v1/budgets', { token: dora.token })).body.data).toEqual([])
    })
  })
})
