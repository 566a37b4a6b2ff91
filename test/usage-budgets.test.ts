/**
 * Usage and budgets (docs/api/usage-and-budgets.md): `GET usage` sums what the stored runs used,
 * budgets read their live spend, and a `block` budget refuses model calls in its scope before
 * anything is stored, or stops a run between steps. The model is the real OpenAI provider client
 * talking to test/helpers/upstream.ts over loopback.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { captureLogs, createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

describe('usage and budgets', () => {
  let t: TestApp
  let upstream: Upstream
  const logs = captureLogs()

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '3000' }, { log: logs.log })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  const makeAgent = async (user: TestUser, body: Record<string, unknown> = {}) =>
    (await t.as(user).agents.create({ name: 'Helper', instruction: 'Answer briefly.', ...body } as never)).data
  const run = (user: { token: string }, agentUuid: string, body: Record<string, unknown>) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: user.token, body })

  it('GET usage equals the sums of the stored runs, grouped by day and by agent', async () => {
    const user = await t.make.user({ name: 'Uma Usage' })
    const a = await makeAgent(user, { name: 'Alpha' })
    const b = await makeAgent(user, { name: 'Beta' })
    for (const [agent, input] of [
      [a, 'one'],
      [a, 'two two'],
      [b, 'three three three'],
    ] as const) {
      upstream.enqueue({ kind: 'text', text: `answer to ${input}`, usage: { prompt_tokens: 10 + input.length, completion_tokens: 5 } })
      expect((await run(user, agent.uuid, { input })).status).toBe(200)
    }
    const sums = await t.sql(
      `select count(*)::int as runs, sum(prompt_tokens)::int as p, sum(completion_tokens)::int as c, sum(total_tokens)::int as tt, sum(cost)::float8 as cost
       from runs where workspace_id = (select id from workspaces where uuid = ?)`,
      [user.workspaceUuid],
    )
    const res = await t.http('GET', '/api/v1/usage', { token: user.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.meta.currency).toBe('USD')
    expect(res.body.meta.totals).toEqual({
      runs: 3,
      prompt_tokens: sums[0].p,
      completion_tokens: sums[0].c,
      total_tokens: sums[0].tt,
      cost: Number(Number(sums[0].cost).toFixed(6)),
    })
    expect(res.body.data).toHaveLength(1)
    expect(res.body.data[0].date).toBe(new Date().toISOString().slice(0, 10))
    const byAgent = await t.http('GET', '/api/v1/usage?group_by=agent,model', { token: user.token })
    expect(byAgent.status, JSON.stringify(byAgent.body)).toBe(200)
    expect(
      byAgent.body.data.map((row: { agent: { name: string }; model: string; runs: number }) => [row.agent.name, row.model, row.runs]),
    ).toEqual([
      ['Alpha', 'gpt-4o-mini', 2],
      ['Beta', 'gpt-4o-mini', 1],
    ])
  })

  it('a block budget refuses the next run with 429 and Retry-After, storing nothing; notify does not', async () => {
    const user = await t.make.user({ name: 'Bea Budget' })
    const agent = await makeAgent(user)
    upstream.enqueue({ kind: 'text', text: 'first', usage: { prompt_tokens: 60, completion_tokens: 50 } })
    expect((await run(user, agent.uuid, { input: 'hi' })).status).toBe(200)
    const created = await t.http('POST', '/api/v1/budgets', {
      token: user.token,
      body: { name: 'Daily cap', scope: 'agent', agent_uuid: agent.uuid, period: 'day', limit_tokens: 100 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body.data).toMatchObject({
      scope: 'agent',
      agent_uuid: agent.uuid,
      spent_tokens: 110,
      remaining_tokens: 0,
      exceeded: true,
      action: 'block',
      alert_thresholds: [80, 100],
    })
    const before = await t.sql('select count(*)::int as n from runs where agent_id = (select id from agents where uuid = ?)', [agent.uuid])
    const refused = await run(user, agent.uuid, { input: 'again' })
    expect(refused.status, JSON.stringify(refused.body)).toBe(429)
    expect(refused.body.code).toBe('TOO_MANY_REQUESTS')
    expect(refused.body.message).toContain('Daily cap')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(86_400)
    const after = await t.sql('select count(*)::int as n from runs where agent_id = (select id from agents where uuid = ?)', [agent.uuid])
    expect(after[0].n).toBe(before[0].n)
    const put = await t.http('PUT', `/api/v1/budgets/${created.body.data.uuid}`, { token: user.token, body: { action: 'notify' } })
    expect(put.status, JSON.stringify(put.body)).toBe(200)
    expect((await run(user, agent.uuid, { input: 'notify only' })).status).toBe(200)
  })

  it('records budget.threshold_reached once per threshold and period', async () => {
    const user = await t.make.user({ name: 'Tess Threshold' })
    const agent = await makeAgent(user)
    const created = await t.http('POST', '/api/v1/budgets', {
      token: user.token,
      body: {
        name: 'Workspace month',
        scope: 'workspace',
        period: 'month',
        limit_tokens: 1000,
        action: 'notify',
        alert_thresholds: [10, 50, 90],
      },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    upstream.enqueue({ kind: 'text', text: 'big', usage: { prompt_tokens: 400, completion_tokens: 200 } })
    expect((await run(user, agent.uuid, { input: 'hi' })).status).toBe(200)
    const alerts = async () => {
      for (let i = 0; i < 50; i++) {
        const rows = await t.sql(
          'select threshold from budget_alerts where budget_id = (select id from budgets where uuid = ?) order by threshold',
          [created.body.data.uuid],
        )
        if (rows.length >= 2) return rows.map((row) => row.threshold)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      return []
    }
    expect(await alerts()).toEqual([10, 50])
    upstream.enqueue({ kind: 'text', text: 'small', usage: { prompt_tokens: 10, completion_tokens: 10 } })
    expect((await run(user, agent.uuid, { input: 'hi' })).status).toBe(200)
    expect(await alerts()).toEqual([10, 50])
    // Each event once, in the log until outbound webhooks deliver it.
    const events = logs.lines
      .map((line) => JSON.parse(line) as { event?: string; budget?: string; threshold?: number; spent_tokens?: number })
      .filter((line) => line.event === 'budget.threshold_reached' && line.budget === created.body.data.uuid)
    expect(events.map((line) => [line.threshold, line.spent_tokens])).toEqual([
      [10, 600],
      [50, 600],
    ])
  })

  it('counts the memory extraction after a run in its scope, as tokens without a run of its own', async () => {
    const user = await t.make.user({ name: 'Mo Memory' })
    const agent = await makeAgent(user, { name: 'Rememberer', metadata: { memory: true } })
    upstream.respondWith((req) => {
      const system = (req.body.messages as { role: string; content: string }[]).find((m) => m.role === 'system')?.content ?? ''
      return system.startsWith('You extract durable facts')
        ? { kind: 'text', text: '["The user is called Mo"]', usage: { prompt_tokens: 30, completion_tokens: 7 } }
        : { kind: 'text', text: 'Noted.', usage: { prompt_tokens: 20, completion_tokens: 3 } }
    })
    const res = await run(user, agent.uuid, { input: 'I am Mo' })
    expect(res.status).toBe(200)
    expect(res.body.data.usage.total_tokens).toBe(23)
    await vi.waitFor(
      async () => {
        const usage = await t.http('GET', '/api/v1/usage?group_by=agent', { token: user.token })
        expect(usage.body.data).toEqual([
          expect.objectContaining({ agent: { uuid: agent.uuid, name: 'Rememberer' }, runs: 1, prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 }),
        ])
      },
      { timeout: 3000, interval: 50 },
    )
  })
})
