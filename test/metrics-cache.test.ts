/**
 * The metrics cache (specification: "Limits"; docs/api/metrics.md), authentication and the paths
 * of the metrics endpoints: same `cached_at` within the window, `Cache-Control: no-cache`
 * recomputes, every parameter is part of the key, invalid requests create no entry, concurrent
 * identical misses compute once; read-only tokens may call them; 401 without a token; every
 * validation rule of every endpoint is a 400 naming its field; another tenant's workspace in
 * X-Workspace-UUID is a 404 revealing nothing; every endpoint answers at `/v1/...` and `/api/v1/...`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { randomUUID } from 'node:crypto'
import { countQueries, expectNamed, member, readOnlyToken, type Member } from './helpers/agents.ts'
import { ok, setCreated } from './helpers/metrics.ts'

const RESOURCES = ['agents', 'workflows', 'workflow-executions', 'threads', 'messages'] as const

/** A column each endpoint may average (docs/api/metrics.md). */
const AVERAGED: Record<(typeof RESOURCES)[number], string> = {
  agents: 'usage_count',
  workflows: 'trigger_count',
  'workflow-executions': 'duration_ms',
  threads: 'messages_count',
  messages: 'total_tokens',
}

/**
 * Bad values of each endpoint's own filters, with the field the 400 must name; the filters of
 * agents and workflows are checked one by one in metrics-resources.test.ts.
 */
const FILTER_RULES: Record<(typeof RESOURCES)[number], [Record<string, unknown>, string][]> = {
  agents: [[{ visibility: 'secret' }, 'visibility']],
  workflows: [[{ category_uuids: ['nope'] }, 'category_uuids']],
  'workflow-executions': [
    [{ user_id: 'me' }, 'user_id'],
    [{ user_id: 0 }, 'user_id'],
    [{ workflow_uuid: 'nope' }, 'workflow_uuid'],
    [{ workflow_uuids: Array.from({ length: 101 }, () => randomUUID()) }, 'workflow_uuids'],
  ],
  threads: [
    [{ workspace_uuid: 'nope' }, 'workspace_uuid'],
    [{ user_id: -1 }, 'user_id'],
    [{ search: 'x'.repeat(256) }, 'search'],
    [{ agent_uuid: 5 }, 'agent_uuid'],
  ],
  messages: [
    [{ search: 'x'.repeat(256) }, 'search'],
    [{ search: 'nul\u0000' }, 'search'],
    [{ thread_uuid: 'nope' }, 'thread_uuid'],
  ],
}

describe('metrics cache, authentication and paths', () => {
  let t: TestApp
  let erin: Member
  let bob: Member
  let sets: string[]

  const metric = (body: Record<string, unknown>, headers: Record<string, string> = {}, path = '/v1/agents/metrics', token = erin.token) =>
    t.http('POST', path, { token, body, headers })

  beforeAll(async () => {
    t = await createTestApp()
    erin = await member(t, await t.make.user({ name: 'Erin' }))
    bob = await member(t, await t.make.user({ name: 'Bob' }))
    const res = await t.http('POST', '/api/v1/agents', { token: erin.token, body: { name: 'Cached' } })
    await setCreated(t, 'agents', res.body.data.uuid, '2026-01-05T10:00:00Z')
    sets = []
    const cache = t.runtime.cache
    const set = cache.set.bind(cache)
    cache.set = (key, value, ttl) => {
      sets.push(String(key))
      return set(key, value, ttl)
    }
  })
  afterAll(async () => t?.close())

  it('an identical request within the window answers the same cached_at and data', async () => {
    const body = { calculation: 'accumulated_count', search: 'Cached' }
    const first = ok(await metric(body))
    expect(first.total).toBe(1)
    await t.http('POST', '/api/v1/agents', { token: erin.token, body: { name: 'Cached too' } })
    const second = ok(await metric({ search: 'Cached', calculation: 'accumulated_count' }))
    expect(second).toEqual(first)
  })

  it('Cache-Control: no-cache recomputes and stores the new answer', async () => {
    const body = { calculation: 'accumulated_count', search: 'Cached' }
    const before = ok(await metric(body))
    const fresh = ok(await metric(body, { 'Cache-Control': 'no-cache' }))
    expect(fresh.cached_at > before.cached_at).toBe(true)
    expect(fresh.total).toBe(2)
    expect(ok(await metric(body))).toEqual(fresh)
  })

  it('every parameter is part of the key: a different filter, date or resource is another entry; /v1 and /api/v1 share one', async () => {
    const base = ok(await metric({ calculation: 'accumulated_count', search: 'Cached' }))
    const dated = ok(await metric({ calculation: 'accumulated_count', search: 'Cached', date_from: '2020-01-01' }))
    expect(dated.cached_at).not.toBe(base.cached_at)
    const other = ok(await metric({ calculation: 'accumulated_count', search: 'Cached' }, {}, '/api/v1/agents/metrics'))
    expect(other).toEqual(base)
    const workflows = ok(await metric({ calculation: 'accumulated_count', search: 'Cached' }, {}, '/v1/workflows/metrics'))
    expect(workflows.total).toBe(0)
  })

  it('an invalid request creates no cache entry', async () => {
    const before = sets.length
    for (const body of [
      { calculation: 'accumulated_count', date_from: '2026-02-30' },
      { calculation: 'accumulated_average', column: '*' },
      { calculation: 'time_series_count' },
      { calculation: 'accumulated_count', unknown: 1 },
    ]) {
      expect((await metric(body)).status).toBe(400)
    }
    expect((await t.http('POST', '/v1/agents/metrics', { token: erin.token, rawBody: '{not json', headers: { 'content-type': 'application/json' } })).status).toBe(400)
    expect(sets.length).toBe(before)
    ok(await metric({ calculation: 'accumulated_count', search: 'valid one' }))
    expect(sets.length).toBe(before + 1)
  })

  it('concurrent identical misses compute once', async () => {
    const body = { calculation: 'time_series_count', granularity: 'daily', search: 'concurrent' }
    const series = (queries: string[]) => queries.filter((sql) => sql.includes('generate_series')).length
    // What one computation sends as counted here (the PostgreSQL pool may see it twice).
    const once = series(await countQueries(t, async () => ok(await metric({ ...body, search: 'single' }))))
    expect(once).toBeGreaterThan(0)
    let answers: { cached_at: string }[] = []
    const queries = await countQueries(t, async () => {
      answers = (await Promise.all([1, 2, 3, 4, 5].map(() => metric(body)))).map(ok)
    })
    expect(series(queries)).toBe(once)
    expect(new Set(answers.map((answer) => answer.cached_at)).size).toBe(1)
  })

  it('tRPC callers share the cache too and get the same shape', async () => {
    const answer = await t.as(erin).metrics.agents({ calculation: 'accumulated_count', search: 'Cached' })
    expect(answer.total).toBe(2)
    expect(answer.cached_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
  })

  for (const resource of RESOURCES) {
    it(`${resource}: /v1 and /api/v1 paths both answer; a read-only token may call them; 401 without a token`, async () => {
      const body = { calculation: 'accumulated_count' }
      const readOnly = await readOnlyToken(t, erin)
      for (const path of [`/v1/${resource}/metrics`, `/api/v1/${resource}/metrics`]) {
        ok(await metric(body, {}, path))
        ok(await metric(body, { 'Cache-Control': 'no-cache' }, path, readOnly.token))
        const anonymous = await t.http('POST', path, { body })
        expect(anonymous.status).toBe(401)
      }
    })
  }

  for (const resource of RESOURCES) {
    it(`${resource}: each rule is a 400 naming the field, and stores nothing`, async () => {
      const before = sets.length
      const bad = async (body: Record<string, unknown>, field: string) =>
        expectNamed(await metric(body, {}, `/api/v1/${resource}/metrics`), field)
      const count = { calculation: 'accumulated_count' }
      await bad({}, 'calculation')
      await bad({ calculation: 'median' }, 'calculation')
      await bad({ calculation: 'time_series_count' }, 'granularity')
      await bad({ calculation: 'time_series_average', column: AVERAGED[resource] }, 'granularity')
      await bad({ calculation: 'time_series_count', granularity: 'hourly' }, 'granularity')
      await bad({ calculation: 'accumulated_average' }, 'column')
      await bad({ calculation: 'time_series_average', granularity: 'daily' }, 'column')
      await bad({ calculation: 'accumulated_average', column: '*' }, 'column')
      await bad({ ...count, column: 'id' }, 'column')
      await bad({ ...count, date_from: '2026-02-30' }, 'date_from')
      await bad({ ...count, date_to: '2026-1-5' }, 'date_to')
      await bad({ ...count, date_from: '1969-12-31' }, 'date_from')
      await bad({ ...count, date_to: '2101-01-01' }, 'date_to')
      await bad({ ...count, date_from: '2026-01-06', date_to: '2026-01-05' }, 'date_from')
      await bad({ ...count, no_such_filter: 1 }, 'no_such_filter')
      for (const [filter, field] of FILTER_RULES[resource]) await bad({ ...count, ...filter }, field)
      expect(sets.length).toBe(before)
      // The same calculations, valid, answer.
      ok(await metric({ calculation: 'accumulated_average', column: AVERAGED[resource] }, {}, `/api/v1/${resource}/metrics`))
      ok(await metric({ ...count, date_from: '2026-01-05', date_to: '2026-01-05' }, {}, `/api/v1/${resource}/metrics`))
    })
  }

  for (const resource of RESOURCES) {
    it(`${resource}: another tenant's workspace in X-Workspace-UUID is a 404 revealing nothing, and is not cached`, async () => {
      const before = sets.length
      for (const path of [`/v1/${resource}/metrics`, `/api/v1/${resource}/metrics`]) {
        const res = await metric({ calculation: 'accumulated_count' }, { 'X-Workspace-UUID': erin.workspaceUuid }, path, bob.token)
        expect(res.status).toBe(404)
        expect(JSON.stringify(res.body)).not.toContain('Erin')
        expect(JSON.stringify(res.body)).not.toContain('Cached')
      }
      expect(sets.length).toBe(before)
    })
  }

  it("another tenant's agents are never counted, whichever path and cache entry", async () => {
    for (const path of ['/v1/agents/metrics', '/api/v1/agents/metrics']) {
      const answer = ok(await metric({ calculation: 'accumulated_count', search: 'Cached' }, { 'Cache-Control': 'no-cache' }, path, bob.token))
      expect(answer.total).toBe(0)
    }
  })

  it('POST /api/v1/agents/metrics reaches the metrics procedure, not an agent route', async () => {
    const res = await metric({ calculation: 'accumulated_count' }, {}, '/api/v1/agents/metrics')
    expect(ok(res).data).toEqual([{ value: 2 }])
    const spec = (await t.http('GET', '/openapi.json')).body
    for (const resource of RESOURCES) {
      expect(spec.paths[`/v1/${resource}/metrics`]?.post).toBeDefined()
      expect(spec.paths[`/api/v1/${resource}/metrics`]?.post).toBeDefined()
    }
    expect(spec.paths['/api/v1/workspaces/{workspace_uuid}/metrics']?.get).toBeDefined()
  })
})
