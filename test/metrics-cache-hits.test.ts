/**
 * The metrics cache's hit path (src/trpc/cache.ts): a hit is answered before the input and output
 * parsers, from the stored JSON text, so these tests pin what must still hold there: the caller
 * and the workspace are checked on every request, the key is the request's parameters as
 * canonical JSON (key order and spacing do not matter), input that is not plain JSON is never
 * answered from an entry, what is stored is the answer's JSON text under a versioned key, a stored
 * value that is not such an answer is recomputed, and no caller can change what later hits answer.
 */
import { TRPCError } from '@trpc/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/trpc/cache.ts'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { readOnlyToken, type Member } from './helpers/agents.ts'
import { metricsCast, ok, setCreated } from './helpers/metrics.ts'

describe('metrics cache hits', () => {
  let t: TestApp
  let erin: Member
  let frank: Member
  let bob: Member
  const sets: { key: string; value: unknown }[] = []

  /** POST /v1/agents/metrics as `token` in erin's workspace (cached unless headers say otherwise). */
  const metric = (body: Record<string, unknown>, token: string | null = erin.token, headers: Record<string, string> = {}) =>
    t.http('POST', '/v1/agents/metrics', { token: token ?? undefined, body, headers: { 'X-Workspace-UUID': erin.workspaceUuid, ...headers } })

  beforeAll(async () => {
    t = await createTestApp()
    ;({ erin, frank, bob } = await metricsCast(t))
    const res = await t.http('POST', '/api/v1/agents', { token: erin.token, body: { name: 'Hit me', visibility: 'workspace' } })
    await setCreated(t, 'agents', res.body.data.uuid, '2026-06-01T10:00:00Z')
    const cache = t.runtime.cache
    const set = cache.set.bind(cache)
    cache.set = (key, value, ttl) => {
      sets.push({ key: String(key), value })
      return set(key, value, ttl)
    }
  })
  afterAll(async () => t?.close())

  it('a hit still checks the caller and the workspace: 401 without or with a bad token, 404 for a non-member', async () => {
    const body = { calculation: 'accumulated_count', search: 'Hit' }
    const first = ok(await metric(body))
    expect(first.total).toBe(1)
    expect(ok(await metric(body)).cached_at).toBe(first.cached_at)

    expect((await metric(body, null)).status).toBe(401)
    expect((await metric(body, 'wst_not-a-real-token')).status).toBe(401)
    const foreign = await metric(body, bob.token)
    expect(foreign.status).toBe(404)
    expect(JSON.stringify(foreign.body)).not.toContain(first.cached_at)
  })

  it('the entry is per caller: another member of the workspace gets its own; the same caller with another token shares it', async () => {
    const body = { calculation: 'accumulated_count', search: 'Hit', date_from: '2026-06-01' }
    const mine = ok(await metric(body))
    const franks = ok(await metric(body, frank.token))
    expect(franks.total).toBe(1)
    expect(franks.cached_at).not.toBe(mine.cached_at)
    const readOnly = await readOnlyToken(t, erin)
    expect(ok(await metric(body, readOnly.token)).cached_at).toBe(mine.cached_at)
  })

  it('key order and JSON spacing do not matter', async () => {
    const first = ok(await metric({ calculation: 'time_series_count', granularity: 'daily', date_from: '2026-06-01', date_to: '2026-06-02' }))
    const rawBody = '{ "date_to" : "2026-06-02", "granularity":"daily",\n "date_from":"2026-06-01", "calculation": "time_series_count" }'
    const again = await t.http('POST', '/v1/agents/metrics', {
      token: erin.token,
      rawBody,
      headers: { 'content-type': 'application/json', 'X-Workspace-UUID': erin.workspaceUuid },
    })
    expect(ok(again)).toEqual(first)
    expect(first.data).toEqual([
      { date: '2026-06-01', value: 1 },
      { date: '2026-06-02', value: 0 },
    ])
  })

  it('canonical JSON sorts object keys at every level and refuses what is not plain JSON', () => {
    expect(canonicalJson({ b: 1, a: [{ d: null, c: 'x' }, true] })).toBe('{"a":[{"c":"x","d":null},true],"b":1}')
    for (const value of [{ a: undefined }, { a: Number.NaN }, { a: new Date(0) }, { a: 1n }, [() => 1], { a: Infinity }]) {
      expect(canonicalJson(value)).toBeUndefined()
    }
  })

  it('input that is not plain JSON (a tRPC caller) is validated, never answered from the entry of look-alike JSON', async () => {
    const caller = t.as(erin, { 'X-Workspace-UUID': erin.workspaceUuid })
    const valid = await caller.metrics.agents({ calculation: 'accumulated_count', search: 'Hit' })
    expect(valid.total).toBe(1)
    // JSON.stringify would drop `extra: undefined` and match the valid entry; the strict parser refuses the key.
    const withUndefined: Parameters<typeof caller.metrics.agents>[0] = { calculation: 'accumulated_count', search: 'Hit' }
    Object.assign(withUndefined, { extra: undefined })
    await expect(caller.metrics.agents(withUndefined)).rejects.toSatisfy((error) => error instanceof TRPCError && error.code === 'BAD_REQUEST')
  })

  it('what is stored is the answer as JSON text, under a versioned key', async () => {
    const before = sets.length
    const answer = ok(await metric({ calculation: 'time_series_average', granularity: 'monthly', column: 'usage_count', search: 'Hit' }))
    const stored = sets.slice(before)
    expect(stored).toHaveLength(1)
    expect(stored[0]!.key).toMatch(/^metrics:v2:[0-9a-f]{64}$/)
    expect(typeof stored[0]!.value).toBe('string')
    expect(JSON.parse(String(stored[0]!.value))).toEqual(answer)
  })

  it('a REST answer, computed or cached, is exactly the JSON of the answer; the text it carries is invisible to other readers', async () => {
    const body = { calculation: 'time_series_count', granularity: 'daily', search: 'Hit', date_from: '2026-05-30', date_to: '2026-06-02' }
    const raw = async () => {
      const response = await fetch(`${t.url}/v1/agents/metrics`, {
        method: 'POST',
        headers: { authorization: `Bearer ${erin.token}`, 'content-type': 'application/json', 'x-workspace-uuid': erin.workspaceUuid },
        body: JSON.stringify(body),
      })
      expect(response.status).toBe(200)
      return response.text()
    }
    const computed = await raw()
    const hit = await raw()
    expect(hit).toBe(computed)
    const answer = JSON.parse(computed)
    expect(answer.data).toEqual([
      { date: '2026-05-30', value: 0 },
      { date: '2026-05-31', value: 0 },
      { date: '2026-06-01', value: 1 },
      { date: '2026-06-02', value: 0 },
    ])
    expect(computed).toBe(JSON.stringify(answer))
    // The same entry through the tRPC caller: a plain answer whose keys and JSON are the REST body's.
    const viaCaller = await t.as(erin, { 'X-Workspace-UUID': erin.workspaceUuid }).metrics.agents(body as never)
    expect(viaCaller.cached_at).toBe(answer.cached_at)
    expect(Object.keys(viaCaller)).toEqual(Object.keys(answer))
    expect(JSON.stringify(viaCaller)).toBe(computed)
    expect({ ...viaCaller }).toStrictEqual(answer)

    // The body of a hit is the stored text itself, not the parsed answer serialised again: a
    // stored text with other spacing (not one this service writes) comes back byte for byte.
    const cache = t.runtime.cache
    const get = cache.get.bind(cache)
    const spaced = '{"total": 7, "data": [{"value": 7}], "cached_at": "2026-01-01T00:00:00.000000Z"}'
    cache.get = ((key: string) =>
      key.startsWith('metrics:') ? Promise.resolve({ value: spaced, expires: Date.now() + 60_000 }) : get(key)) as typeof cache.get
    try {
      body.date_to = '2026-06-03'
      expect(await raw()).toBe(spaced)
    } finally {
      cache.get = get
    }
  })

  it('a stored value that is not an answer this service wrote is recomputed', async () => {
    const cache = t.runtime.cache
    const get = cache.get.bind(cache)
    const broken = [{ value: '{"total": 999}' }, { value: 'not json' }, { value: { total: 999, data: [], cached_at: 'x' } }]
    try {
      for (const [index, entry] of broken.entries()) {
        cache.get = ((key: string) =>
          key.startsWith('metrics:') ? Promise.resolve({ ...entry, expires: Date.now() + 60_000 }) : get(key)) as typeof cache.get
        const before = sets.length
        const answer = ok(await metric({ calculation: 'accumulated_count', search: 'Hit', date_to: `2026-12-0${index + 1}` }))
        expect(answer.total).toBe(1)
        expect(sets.length).toBe(before + 1)
      }
    } finally {
      cache.get = get
    }
  })

  it('a caller changing an answer it received does not change what later hits answer', async () => {
    const caller = t.as(erin, { 'X-Workspace-UUID': erin.workspaceUuid })
    const input = { calculation: 'time_series_count' as const, granularity: 'daily' as const, date_from: '2026-06-01', date_to: '2026-06-01' }
    const first = await caller.metrics.agents(input)
    const snapshot = structuredClone(first)
    const hit = await caller.metrics.agents(input)
    try {
      hit.data.push({ date: '2000-01-01', value: 5 })
      hit.total = 42
    } catch {
      // Hits from this process's copies are frozen.
    }
    expect(await caller.metrics.agents(input)).toEqual(snapshot)
    expect(ok(await metric(input)).cached_at).toBe(snapshot.cached_at)
  })
})
