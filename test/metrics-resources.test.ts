/**
 * `POST /v1/agents/metrics` and `POST /v1/workflows/metrics` (specification: "Metrics endpoints";
 * docs/api/metrics.md): every calculation and granularity with exact numbers on known dates, the
 * date rules, every filter, visibility and tenant isolation, and each validation rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { expectNamed, type Member } from './helpers/agents.ts'
import { createIn, metricsCast, ok, setCreated } from './helpers/metrics.ts'

describe('agents and workflows metrics', () => {
  let t: TestApp
  let erin: Member
  let frank: Member
  let bob: Member
  let cat1: string
  const made: Record<string, string> = {}

  /** Calls a metrics endpoint as `user` in erin's workspace unless told otherwise. */
  const metric = (resource: string, body: Record<string, unknown>, user: { token: string } = erin, headers: Record<string, string> = {}) =>
    t.http('POST', `/v1/${resource}/metrics`, {
      token: user.token,
      body,
      headers: { 'Cache-Control': 'no-cache', 'X-Workspace-UUID': user === bob ? bob.workspaceUuid : erin.workspaceUuid, ...headers },
    })

  /** Creates a resource through the API and dates it. */
  const create = async (
    table: 'agents' | 'workflows',
    label: string,
    user: Member,
    workspaceUuid: string,
    at: string,
    count: number,
    input: Record<string, unknown> = {},
  ) => {
    const uuid = await createIn(t, table, user, workspaceUuid, { name: label, ...input })
    await setCreated(t, table, uuid, at)
    await t.sql(`update ${table} set ${table === 'agents' ? 'usage_count' : 'trigger_count'} = ? where uuid = ?`, [count, uuid])
    made[`${table}:${label}`] = uuid
    return uuid
  }

  beforeAll(async () => {
    t = await createTestApp()
    ;({ erin, frank, bob } = await metricsCast(t))
    cat1 = (await t.http('GET', '/api/v1/categories', { token: erin.token })).body.data[1].uuid
    for (const table of ['agents', 'workflows'] as const) {
      const ws = erin.workspaceUuid
      await create(table, 'Alpha', erin, ws, '2026-01-05T10:00:00Z', 3, { visibility: 'private' })
      await create(table, 'Beta', erin, ws, '2026-01-05T23:59:59Z', 5, { visibility: 'workspace', is_template: true, category_uuids: [cat1] })
      await create(table, 'Gamma 100%_x', erin, ws, '2026-01-07T12:00:00Z', 0, { visibility: 'public' })
      await create(table, 'Delta', erin, ws, '2026-01-12T00:00:00Z', 10, { visibility: 'workspace' })
      const fav = await create(table, 'Epsilon', erin, ws, '2026-02-03T08:00:00Z', 1, { visibility: 'workspace' })
      await create(table, 'Frank one', frank, ws, '2026-01-06T00:00:00Z', 2, { visibility: 'workspace' })
      const res = await t.http('POST', `/api/v1/${table}/${fav}/favorite`, { token: erin.token, headers: { 'X-Workspace-UUID': ws } })
      expect(res.status).toBe(204)
      // Another tenant, same days: never counted.
      await create(table, 'Bob Alpha', bob, bob.workspaceUuid, '2026-01-05T10:00:00Z', 100, { visibility: 'workspace' })
      await create(table, 'Bob Gamma 100%', bob, bob.workspaceUuid, '2026-01-07T10:00:00Z', 100, { visibility: 'private' })
    }
  })
  afterAll(async () => t?.close())

  for (const [resource, column] of [
    ['agents', 'usage_count'],
    ['workflows', 'trigger_count'],
  ] as const) {
    describe(`${resource} metrics`, () => {
      it('accumulated_count counts every listable row of the workspace (never another tenant)', async () => {
        const body = ok(await metric(resource, { calculation: 'accumulated_count' }))
        expect(body).toMatchObject({ total: 6, data: [{ value: 6 }] })
        expect(Object.keys(body.data[0])).toEqual(['value'])
        expect(ok(await metric(resource, { calculation: 'accumulated_count' }, bob)).total).toBe(2)
      })

      it('a private row of another member is not counted (visibility)', async () => {
        expect(ok(await metric(resource, { calculation: 'accumulated_count' }, frank)).total).toBe(5)
      })

      it('time_series_count daily is gap-filled from date_from to date_to, date_to inclusive', async () => {
        const body = ok(
          await metric(resource, { calculation: 'time_series_count', granularity: 'daily', date_from: '2026-01-04', date_to: '2026-01-07' }),
        )
        expect(body.data).toEqual([
          { date: '2026-01-04', value: 0 },
          { date: '2026-01-05', value: 2 },
          { date: '2026-01-06', value: 1 },
          { date: '2026-01-07', value: 1 },
        ])
        expect(body.total).toBe(4)
      })

      it('time_series_count weekly starts weeks on Monday and runs from the first to the last record', async () => {
        const body = ok(await metric(resource, { calculation: 'time_series_count', granularity: 'weekly' }))
        expect(body.data).toEqual([
          { date: '2026-01-05', value: 4 },
          { date: '2026-01-12', value: 1 },
          { date: '2026-01-19', value: 0 },
          { date: '2026-01-26', value: 0 },
          { date: '2026-02-02', value: 1 },
        ])
        expect(body.total).toBe(6)
      })

      it('time_series_count monthly buckets calendar months', async () => {
        const body = ok(await metric(resource, { calculation: 'time_series_count', granularity: 'monthly', date_to: '2026-03-15' }))
        expect(body.data).toEqual([
          { date: '2026-01-01', value: 5 },
          { date: '2026-02-01', value: 1 },
          { date: '2026-03-01', value: 0 },
        ])
        expect(body.total).toBe(6)
      })

      it('accumulated_average averages the column with the count of records used', async () => {
        const body = ok(await metric(resource, { calculation: 'accumulated_average', column }))
        expect(body).toMatchObject({ total: 3.5, data: [{ value: 3.5, count: 6 }] })
        // (3 + 5 + 0) / 3 rounded to 4 decimals.
        const rounded = ok(await metric(resource, { calculation: 'accumulated_average', column, user_id: erin.id, date_to: '2026-01-07' }))
        expect(rounded).toMatchObject({ total: 2.6667, data: [{ value: 2.6667, count: 3 }] })
      })

      it('time_series_average gives period averages, null with count 0 for empty periods, total over all records', async () => {
        const body = ok(await metric(resource, { calculation: 'time_series_average', granularity: 'weekly', column }))
        expect(body.data).toEqual([
          { date: '2026-01-05', value: 2.5, count: 4 },
          { date: '2026-01-12', value: 10, count: 1 },
          { date: '2026-01-19', value: null, count: 0 },
          { date: '2026-01-26', value: null, count: 0 },
          { date: '2026-02-02', value: 1, count: 1 },
        ])
        expect(body.total).toBe(3.5)
      })

      it('no matching records: count 0, average null, series [] without dates, zeros with dates', async () => {
        const none = { search: 'no such thing' }
        expect(ok(await metric(resource, { calculation: 'accumulated_count', ...none }))).toMatchObject({ total: 0, data: [{ value: 0 }] })
        expect(ok(await metric(resource, { calculation: 'accumulated_average', column, ...none }))).toMatchObject({
          total: null,
          data: [{ value: null, count: 0 }],
        })
        expect(ok(await metric(resource, { calculation: 'time_series_count', granularity: 'daily', ...none }))).toMatchObject({ total: 0, data: [] })
        expect(ok(await metric(resource, { calculation: 'time_series_average', granularity: 'daily', column, ...none }))).toMatchObject({
          total: null,
          data: [],
        })
        const dated = ok(
          await metric(resource, { calculation: 'time_series_average', granularity: 'monthly', column, date_from: '2025-11-20', date_to: '2025-12-02', ...none }),
        )
        expect(dated.data).toEqual([
          { date: '2025-11-01', value: null, count: 0 },
          { date: '2025-12-01', value: null, count: 0 },
        ])
      })

      it('date rules: only date_from, only date_to (through the end of the day), both', async () => {
        const count = async (dates: Record<string, string>) => ok(await metric(resource, { calculation: 'accumulated_count', ...dates })).total
        expect(await count({ date_to: '2026-01-05' })).toBe(2)
        expect(await count({ date_from: '2026-01-06' })).toBe(4)
        expect(await count({ date_from: '2026-01-06', date_to: '2026-01-07' })).toBe(2)
        expect(await count({ date_from: '2026-01-05', date_to: '2026-01-05' })).toBe(2)
      })

      it('count with a numeric column (never null here) or * counts the rows', async () => {
        expect(ok(await metric(resource, { calculation: 'accumulated_count', column })).total).toBe(6)
        expect(ok(await metric(resource, { calculation: 'accumulated_count', column: '*' })).total).toBe(6)
      })

      it('granularity is ignored for accumulated calculations', async () => {
        expect(ok(await metric(resource, { calculation: 'accumulated_count', granularity: 'weekly' })).total).toBe(6)
      })

      it('filters: user_id, search (literal % and _), visibility, category_uuids, favorite, template, workspace_uuid', async () => {
        const count = async (filters: Record<string, unknown>, user: Member = erin) =>
          ok(await metric(resource, { calculation: 'accumulated_count', ...filters }, user)).total
        expect(await count({ user_id: frank.id })).toBe(1)
        expect(await count({ search: 'ALPHA' })).toBe(1)
        expect(await count({ search: '100%' })).toBe(1)
        expect(await count({ search: '%' })).toBe(1)
        expect(await count({ search: '_' })).toBe(1)
        expect(await count({ search: "'; drop table agents; --" })).toBe(0)
        expect(await count({ visibility: 'private' })).toBe(1)
        expect(await count({ visibility: 'workspace' })).toBe(4)
        expect(await count({ category_uuids: [cat1] })).toBe(1)
        expect(await count({ favorite: true })).toBe(1)
        expect(await count({ favorite: false })).toBe(6)
        expect(await count({ template: true })).toBe(1)
        expect(await count({ template: false })).toBe(6)
        expect(await count({ workspace_uuid: erin.workspaceUuid })).toBe(6)
        expect(await count({ search: 'Alpha', visibility: 'private', user_id: erin.id })).toBe(1)
      })

      it("another tenant's workspace_uuid is a 404 revealing nothing", async () => {
        const res = await t.http('POST', `/v1/${resource}/metrics`, {
          token: erin.token,
          body: { calculation: 'accumulated_count', workspace_uuid: bob.workspaceUuid },
        })
        expect(res.status).toBe(404)
        expect(JSON.stringify(res.body)).not.toContain('Bob')
      })

      it('validation: each rule is a 400 naming the field', async () => {
        const bad = async (body: Record<string, unknown>, field: string) => expectNamed(await metric(resource, body), field)
        await bad({}, 'calculation')
        await bad({ calculation: 'median' }, 'calculation')
        await bad({ calculation: 'time_series_count' }, 'granularity')
        await bad({ calculation: 'time_series_count', granularity: 'hourly' }, 'granularity')
        await bad({ calculation: 'accumulated_average' }, 'column')
        await bad({ calculation: 'time_series_average', granularity: 'daily' }, 'column')
        await bad({ calculation: 'accumulated_average', column: '*' }, 'column')
        await bad({ calculation: 'accumulated_count', column: 'name' }, 'column')
        await bad({ calculation: 'accumulated_count', column: 'id; drop table x' }, 'column')
        await bad({ calculation: 'accumulated_count', date_from: '2026-02-30' }, 'date_from')
        await bad({ calculation: 'accumulated_count', date_to: '2026-1-5' }, 'date_to')
        await bad({ calculation: 'accumulated_count', date_from: '0000-01-01' }, 'date_from')
        await bad({ calculation: 'time_series_count', granularity: 'daily', date_to: '9999-12-31' }, 'date_to')
        await bad({ calculation: 'accumulated_count', date_to: '2026-01-05T00:00:00Z' }, 'date_to')
        await bad({ calculation: 'accumulated_count', date_from: '2026-01-06', date_to: '2026-01-05' }, 'date_from')
        await bad({ calculation: 'accumulated_count', thread_uuid: erin.workspaceUuid }, 'thread_uuid')
        await bad({ calculation: 'accumulated_count', agent_uuid: erin.workspaceUuid }, 'agent_uuid')
        await bad({ calculation: 'accumulated_count', user_id: 'me' }, 'user_id')
        await bad({ calculation: 'accumulated_count', user_id: '5' }, 'user_id')
        await bad({ calculation: 'accumulated_count', favorite: 'true' }, 'favorite')
        await bad({ calculation: 'accumulated_count', template: 1 }, 'template')
        await bad({ calculation: 'accumulated_count', visibility: 'secret' }, 'visibility')
        await bad({ calculation: 'accumulated_count', category_uuids: 'not-a-list' }, 'category_uuids')
        await bad({ calculation: 'accumulated_count', category_uuids: ['nope'] }, 'category_uuids')
        await bad({ calculation: ['accumulated_count'] }, 'calculation')
        await bad({ calculation: 'accumulated_count', search: ['a'] }, 'search')
        await bad({ calculation: 'accumulated_count', search: 'x'.repeat(256) }, 'search')
      })
    })
  }
})
