/**
 * Evaluations (docs/api/evaluations.md): a dataset run against an agent through the job queue,
 * every item an ordinary stored run (with `evaluation_uuid`, left out of the agent's usage count,
 * thread lists, the leaderboard and metrics), graded by the deterministic scorers; a failing item
 * scored 0 without failing the evaluation; cancel (409 once ended); results in dataset order;
 * compare of two evaluations of one dataset; each validation rule, 401, another tenant (404 or a
 * 400 naming the field for a referenced dataset or agent), a member who did not start it (404) and
 * read-only access (403). The model is the real OpenAI provider client talking to
 * test/helpers/upstream.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { expectNamed, member, readOnlyToken, type Member } from './helpers/agents.ts'
import { expectErrorBody } from './helpers/expect.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

const EVALUATIONS = '/api/v1/evaluations'

interface Evaluation {
  uuid: string
  status: string
  agent_version: number
  progress: { total: number; done: number; failed: number }
  summary: { scorer: { type: string }; mean_score: number | null; pass_rate: number | null }[]
  usage: { total_tokens: number; cost: number }
  latency_ms: { p50: number | null; p95: number | null }
}

describe('evaluations', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: Member
  let bob: Member
  let carol: Member
  let agent: { uuid: string }
  let dataset: string

  const post = (body: Record<string, unknown>, token = alice.token) => t.http('POST', EVALUATIONS, { token, body })
  const get = (path: string, token = alice.token) => t.http('GET', path, { token })

  async function makeDataset(user: Member, items: Record<string, unknown>[], name = 'Questions'): Promise<string> {
    const made = await t.http('POST', '/api/v1/datasets', { token: user.token, body: { name } })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    if (items.length) {
      const added = await t.http('POST', `/api/v1/datasets/${made.body.data.uuid}/items`, { token: user.token, body: { items } })
      expect(added.status, JSON.stringify(added.body)).toBe(201)
    }
    return made.body.data.uuid
  }

  /** Reads the evaluation until it has ended (the job queue works it in this process). */
  async function ended(uuid: string, token = alice.token): Promise<Evaluation> {
    const deadline = Date.now() + 25_000
    for (;;) {
      const res = await get(`${EVALUATIONS}/${uuid}`, token)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      if (!['queued', 'running'].includes(res.body.data.status)) return res.body.data
      if (Date.now() > deadline) throw new Error(`evaluation still ${res.body.data.status}: ${JSON.stringify(res.body.data.progress)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '5000' })
    alice = await member(t, await t.make.user({ name: 'Alice Evaluator' }))
    bob = await member(t, await t.make.user({ name: 'Bob Tenant' }))
    carol = await member(t, await t.make.user({ name: 'Carol Member' }))
    await t.make.member(alice.workspaceUuid, alice, carol, 'member')
    const made = await t.http('POST', '/api/v1/agents', { token: alice.token, body: { name: 'Echo agent', instruction: 'Answer briefly.', visibility: 'workspace' } })
    expect(made.status).toBe(201)
    agent = made.body.data
    dataset = await makeDataset(alice, [
      { input: 'alpha', expected_output: 'Echo: alpha' },
      { input: '{"n": 1}', expected_output: 'Echo: {"n": 1}' },
      { input: 'gamma', expected_output: 'something else' },
    ])
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  it('runs every item as a stored run of the agent at its version, grades it and sums it up', async () => {
    const before = (await get(`/api/v1/agents/${agent.uuid}`)).body.data.usage_count
    const scorers = [
      { type: 'exact_match' },
      { type: 'contains', value: 'Echo' },
      { type: 'regex', pattern: '^Echo: [a-z]+$' },
      { type: 'max_latency_ms', value: 60_000 },
      { type: 'max_cost', value: 1 },
    ]
    const created = await post({ name: 'Baseline', dataset_uuid: dataset, agent_uuid: agent.uuid, scorers, concurrency: 2 })
    expect(created.status, JSON.stringify(created.body)).toBe(202)
    expect(created.body.data).toMatchObject({ name: 'Baseline', dataset: { uuid: dataset, name: 'Questions' }, agent: { uuid: agent.uuid, name: 'Echo agent' }, agent_version: 1, scorers, concurrency: 2 })
    expect(created.body.data.progress.total).toBe(3)

    const done = await ended(created.body.data.uuid)
    expect(done.status).toBe('succeeded')
    expect(done.progress).toEqual({ total: 3, done: 3, failed: 0 })
    expect(done.summary.map((s) => [s.scorer.type, s.mean_score, s.pass_rate])).toEqual([
      ['exact_match', 0.6667, 0.6667],
      ['contains', 1, 1],
      ['regex', 0.6667, 0.6667],
      ['max_latency_ms', 1, 1],
      ['max_cost', 1, 1],
    ])
    expect(done.usage.total_tokens).toBeGreaterThan(0)
    expect(done.latency_ms.p50).toBeGreaterThanOrEqual(0)
    expect(done.latency_ms.p95).toBeGreaterThanOrEqual(done.latency_ms.p50 ?? 0)

    const results = await get(`${EVALUATIONS}/${done.uuid}/results`)
    expect(results.status).toBe(200)
    expect(results.body.meta.total).toBe(3)
    const [first, second, third] = results.body.data
    expect(first.item).toMatchObject({ input: 'alpha', expected_output: 'Echo: alpha', metadata: null })
    expect(first).toMatchObject({ status: 'succeeded', output: 'Echo: alpha', error: null })
    expect(first.scores.map((s: { passed: boolean }) => s.passed)).toEqual([true, true, true, true, true])
    expect(second.scores[2]).toMatchObject({ scorer: scorers[2], score: 0, passed: false })
    expect(third.scores[0]).toMatchObject({ scorer: { type: 'exact_match' }, score: 0, passed: false })
    expect(typeof third.scores[0].reason).toBe('string')

    // Each item is an ordinary run, named by the evaluation, at the evaluation's version.
    const run = await get(`/api/v1/runs/${first.run_uuid}`)
    expect(run.status).toBe(200)
    expect(run.body.data.run).toMatchObject({ status: 'succeeded', evaluation_uuid: done.uuid, agent_version: 1, output: 'Echo: alpha' })
    expect(upstream.requests.filter((request) => request.path.endsWith('/chat/completions'))).toHaveLength(3)

    // Not the agent's use: its usage count, the thread list, the leaderboard and the metrics leave them out.
    expect((await get(`/api/v1/agents/${agent.uuid}`)).body.data.usage_count).toBe(before)
    const threads = await get(`/api/v1/threads?agent_uuid=${agent.uuid}`)
    expect(threads.body.data).toEqual([])
    const board = await t.http('GET', '/api/v1/agents/leaderboard?period=all', { token: alice.token, headers: { 'cache-control': 'no-cache' } })
    expect(board.body.data.map((row: { uuid: string }) => row.uuid)).not.toContain(agent.uuid)
    for (const kind of ['threads', 'messages']) {
      const metrics = await t.http('POST', `/api/v1/${kind}/metrics`, { token: alice.token, headers: { 'cache-control': 'no-cache' }, body: { calculation: 'accumulated_count' } })
      expect(metrics.status, JSON.stringify(metrics.body)).toBe(200)
      expect(metrics.body.total).toBe(0)
    }
    const summary = await t.http('GET', `/api/v1/workspaces/${alice.workspaceUuid}/metrics`, { token: alice.token, headers: { 'cache-control': 'no-cache' } })
    expect(summary.body.data).toMatchObject({ runs: 0, threads: 0, messages: 0 })
  })

  it('scores a failed run 0 on every scorer with its reason, and the evaluation goes on', async () => {
    upstream.respondWith((request) =>
      JSON.stringify(request.body).includes('gamma') ? { kind: 'status', status: 400, body: { error: { message: 'bad request upstream', type: 'invalid_request_error' } } } : { kind: 'text', text: 'Echo: ok' },
    )
    const created = await post({ name: 'With a failure', dataset_uuid: dataset, agent_uuid: agent.uuid, scorers: [{ type: 'contains' }, { type: 'max_cost', value: 0 }] })
    expect(created.status).toBe(202)
    const done = await ended(created.body.data.uuid)
    expect(done.status).toBe('succeeded')
    expect(done.progress).toEqual({ total: 3, done: 3, failed: 1 })
    const failed = (await get(`${EVALUATIONS}/${done.uuid}/results?status=failed`)).body
    expect(failed.meta.total).toBe(1)
    expect(failed.data[0].item.input).toBe('gamma')
    expect(failed.data[0].error).toBeTruthy()
    expect(failed.data[0].scores).toHaveLength(2)
    for (const score of failed.data[0].scores) expect(score).toMatchObject({ score: 0, passed: false })
    expect(failed.data[0].scores[0].reason).toMatch(/^The run failed/)
  })

  it('cancels (200, items left canceled, the runs under way canceled), then 409', async () => {
    upstream.respondWith(() => ({ kind: 'slow', delayMs: 4_000 }))
    const created = await post({ name: 'Slow', dataset_uuid: dataset, agent_uuid: agent.uuid, scorers: [{ type: 'exact_match' }], concurrency: 1 })
    expect(created.status).toBe(202)
    const uuid = created.body.data.uuid
    // Wait for the first item's run to start.
    for (let i = 0; i < 100 && upstream.pending() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    const canceled = await t.http('POST', `${EVALUATIONS}/${uuid}/cancel`, { token: alice.token, body: {} })
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200)
    expect(canceled.body.data.status).toBe('canceled')
    expectErrorBody(await t.http('POST', `${EVALUATIONS}/${uuid}/cancel`, { token: alice.token, body: {} }), 409, 'CONFLICT')
    await expect
      .poll(async () => (await get(`${EVALUATIONS}/${uuid}/results`)).body.data.map((r: { status: string }) => r.status), { timeout: 10_000 })
      .toEqual(['canceled', 'canceled', 'canceled'])
    const results = (await get(`${EVALUATIONS}/${uuid}/results`)).body.data
    if (results[0].run_uuid) {
      await expect.poll(async () => (await get(`/api/v1/runs/${results[0].run_uuid}`)).body.data.run.status, { timeout: 10_000 }).toBe('canceled')
    }
    expect((await get(`${EVALUATIONS}/${uuid}`)).body.data).toMatchObject({ status: 'canceled', progress: { total: 3, done: 0, failed: 0 } })
  })

  it('compares two evaluations of one dataset: means, differences and the items whose verdict changed', async () => {
    const scorers = [{ type: 'contains', value: 'alpha' }]
    const base = await post({ name: 'Base', dataset_uuid: dataset, agent_uuid: agent.uuid, scorers })
    const baseDone = await ended(base.body.data.uuid)
    upstream.respondWith(() => ({ kind: 'text', text: 'alpha everywhere' }))
    const candidate = await post({ name: 'Candidate', dataset_uuid: dataset, agent_uuid: agent.uuid, scorers })
    const candidateDone = await ended(candidate.body.data.uuid)
    const res = await get(`${EVALUATIONS}/compare?base=${baseDone.uuid}&candidate=${candidateDone.uuid}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.base.uuid).toBe(baseDone.uuid)
    expect(res.body.data.candidate.uuid).toBe(candidateDone.uuid)
    expect(res.body.data.scorers).toEqual([{ scorer: scorers[0], base_mean: 0.3333, candidate_mean: 1, difference: 0.6667 }])
    expect(res.body.data.changed_items.map((c: { item: { input: string }; base_passed: boolean; candidate_passed: boolean }) => [c.item.input, c.base_passed, c.candidate_passed])).toEqual([
      ['{"n": 1}', false, true],
      ['gamma', false, true],
    ])

    const other = await makeDataset(alice, [{ input: 'alpha' }], 'Other')
    const elsewhere = await post({ name: 'Elsewhere', dataset_uuid: other, agent_uuid: agent.uuid, scorers })
    await ended(elsewhere.body.data.uuid)
    expectNamed(await get(`${EVALUATIONS}/compare?base=${baseDone.uuid}&candidate=${elsewhere.body.data.uuid}`), 'candidate')
  })

  it('lists with filters, newest first', async () => {
    const list = await get(`${EVALUATIONS}?dataset_uuid=${dataset}&status=succeeded&per_page=2`)
    expect(list.status).toBe(200)
    expect(list.body.data).toHaveLength(2)
    expect(list.body.meta.total).toBeGreaterThanOrEqual(3)
    for (const item of list.body.data) expect(item).toMatchObject({ status: 'succeeded', dataset: { uuid: dataset } })
    expect(list.body.data[0].created_at >= list.body.data[1].created_at).toBe(true)
    expect((await get(`${EVALUATIONS}?status=canceled`)).body.data.every((e: Evaluation) => e.status === 'canceled')).toBe(true)
  })

  describe('validation (400 naming the field, nothing stored)', () => {
    const valid = () => ({ name: 'V', dataset_uuid: dataset, agent_uuid: agent.uuid, scorers: [{ type: 'exact_match' }] })
    const count = async () => Number((await t.sql('select count(*)::int as n from evaluations'))[0].n)

    it.each([
      ['name', { name: '' }],
      ['dataset_uuid', { dataset_uuid: 'nope' }],
      ['concurrency', { concurrency: 11 }],
      ['concurrency', { concurrency: 0 }],
      ['scorers', { scorers: [] }],
      ['scorers.0.pattern', { scorers: [{ type: 'regex', pattern: '(' }] }],
      ['scorers.0.schema', { scorers: [{ type: 'json_schema', schema: { type: 'no-such-type' } }] }],
      ['agent_version', { agent_version: 0 }],
      ['agent_version', { agent_version: 99 }],
    ])('%s: %j', async (field, patch) => {
      const before = await count()
      expectNamed(await post({ ...valid(), ...patch }), field)
      expect(await count()).toBe(before)
    })

    it("another tenant's dataset or agent, and an empty dataset, name the field without revealing them", async () => {
      const bobDataset = await makeDataset(bob, [{ input: 'secret question' }], 'Bob secret dataset')
      const bobAgent = await t.http('POST', '/api/v1/agents', { token: bob.token, body: { name: 'Bob secret agent' } })
      const before = await count()
      const res = await post({ ...valid(), dataset_uuid: bobDataset })
      expectNamed(res, 'dataset_uuid')
      expect(JSON.stringify(res.body)).not.toContain('Bob secret')
      expectNamed(await post({ ...valid(), agent_uuid: bobAgent.body.data.uuid }), 'agent_uuid')
      const empty = await makeDataset(alice, [], 'Empty')
      expectNamed(await post({ ...valid(), dataset_uuid: empty }), 'dataset_uuid')
      expect(await count()).toBe(before)
    })
  })

  describe('access', () => {
    let uuid: string
    beforeAll(async () => {
      const created = await post({ name: 'Private to Alice', dataset_uuid: dataset, agent_uuid: agent.uuid, scorers: [{ type: 'exact_match' }] })
      uuid = created.body.data.uuid
      await ended(uuid)
    })

    it('401 without a token on every operation', async () => {
      for (const [method, path] of [
        ['GET', EVALUATIONS], ['POST', EVALUATIONS], ['GET', `${EVALUATIONS}/${uuid}`], ['GET', `${EVALUATIONS}/${uuid}/results`],
        ['POST', `${EVALUATIONS}/${uuid}/cancel`], ['GET', `${EVALUATIONS}/compare?base=${uuid}&candidate=${uuid}`],
      ]) {
        expectErrorBody(await t.http(method, path, method === 'POST' ? { body: {} } : {}), 401, 'UNAUTHORIZED')
      }
    })

    it("another tenant and a member who did not start it get 404 and nothing of it; the workspace's owner reads it", async () => {
      for (const user of [bob, carol]) {
        const headers: Record<string, string> = user === carol ? { 'x-workspace-uuid': alice.workspaceUuid } : {}
        for (const path of [`${EVALUATIONS}/${uuid}`, `${EVALUATIONS}/${uuid}/results`, `${EVALUATIONS}/compare?base=${uuid}&candidate=${uuid}`]) {
          const res = await t.http('GET', path, { token: user.token, headers })
          expectErrorBody(res, 404, 'NOT_FOUND')
          expect(JSON.stringify(res.body)).not.toContain('Private to Alice')
        }
        expectErrorBody(await t.http('POST', `${EVALUATIONS}/${uuid}/cancel`, { token: user.token, headers, body: {} }), 404, 'NOT_FOUND')
        const list = await t.http('GET', EVALUATIONS, { token: user.token, headers })
        expect(list.body.data.map((e: Evaluation) => e.uuid)).not.toContain(uuid)
      }
    })

    it('a read-only token reads (200) but gets 403 on create and cancel', async () => {
      const reader = await readOnlyToken(t, alice)
      expect((await get(`${EVALUATIONS}/${uuid}`, reader.token)).status).toBe(200)
      expect((await get(`${EVALUATIONS}/${uuid}/results`, reader.token)).status).toBe(200)
      expectErrorBody(await post({ name: 'x', dataset_uuid: dataset, agent_uuid: agent.uuid, scorers: [{ type: 'exact_match' }] }, reader.token), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('POST', `${EVALUATIONS}/${uuid}/cancel`, { token: reader.token, body: {} }), 403, 'FORBIDDEN')
    })
  })
})
