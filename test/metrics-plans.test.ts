/**
 * The shapes the metrics statements take for speed (src/metrics/metrics.service.ts,
 * src/metrics/metrics.query.ts), each against exact numbers: agents and workflows as two disjoint
 * branches (the workspace's rows, and rows of other workspaces shared with the caller or the
 * workspace) that count exactly the rows of the list, once each; threads and messages excluded
 * when their agent is deleted ("no deleted agent"); daily and weekly buckets by `date_bin` from a
 * Monday, exact at midnight and week boundaries, also before its origin (2000-01-03).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import type { Member } from './helpers/agents.ts'
import { createIn, idOf, insertMessage, insertThread, metricsCast, ok, setCreated } from './helpers/metrics.ts'

describe('metrics statements: branches, deleted agents, buckets', () => {
  let t: TestApp
  let erin: Member
  let frank: Member
  let bob: Member

  const metric = (resource: string, body: Record<string, unknown>, user: Member = erin) =>
    t.http('POST', `/v1/${resource}/metrics`, {
      token: user.token,
      body,
      headers: { 'Cache-Control': 'no-cache', 'X-Workspace-UUID': erin.workspaceUuid },
    })
  const count = async (resource: string, filters: Record<string, unknown>, user: Member = erin) =>
    ok(await metric(resource, { calculation: 'accumulated_count', ...filters }, user)).total

  /** Rows of erin's workspace list for `user` created on 2026-05-04 (the day the share tests use). */
  const listed = async (table: 'agents' | 'workflows', user: Member) => {
    const res = await t.http('GET', `/api/v1/${table}?per_page=100`, { token: user.token, headers: { 'X-Workspace-UUID': erin.workspaceUuid } })
    expect(res.status).toBe(200)
    const uuids: string[] = res.body.data.map((row: { uuid: string }) => row.uuid)
    const rows = await t.sql(`select uuid from ${table} where created_at::date = '2026-05-04'`)
    const dated = new Set(rows.map((row) => String(row.uuid)))
    return uuids.filter((uuid) => dated.has(uuid)).length
  }

  const share = (table: string, id: number, entityType: 'user' | 'workspace', entityId: number) =>
    t.sql(
      `insert into shares (resource_type, resource_id, entity_type, entity_id, permission, created_at, updated_at) values (?, ?, ?, ?, 'read', now(), now())`,
      [table, id, entityType, entityId],
    )

  beforeAll(async () => {
    t = await createTestApp()
    ;({ erin, frank, bob } = await metricsCast(t))
    for (const table of ['agents', 'workflows'] as const) {
      const make = async (user: Member, workspaceUuid: string, name: string, visibility: string, at = '2026-05-04T12:00:00Z') => {
        const uuid = await createIn(t, table, user, workspaceUuid, { name, visibility })
        await setCreated(t, table, uuid, at)
        return idOf(t, table, uuid)
      }
      await make(erin, erin.workspaceUuid, 'Own', 'workspace')
      await make(frank, erin.workspaceUuid, 'Frank private', 'private')
      // Bob's workspace: shared with erin, with erin's workspace, with both (counted once), not at all.
      await share(table, await make(bob, bob.workspaceUuid, 'To erin', 'private'), 'user', erin.id)
      await share(table, await make(bob, bob.workspaceUuid, 'To workspace', 'workspace'), 'workspace', erin.wsId)
      const both = await make(bob, bob.workspaceUuid, 'To both', 'private')
      await share(table, both, 'user', erin.id)
      await share(table, both, 'workspace', erin.wsId)
      await make(bob, bob.workspaceUuid, 'Not shared', 'workspace')
      // Bob's workspace row shared with bob himself: never erin's.
      await share(table, await make(bob, bob.workspaceUuid, 'To bob', 'private'), 'user', bob.id)
      // Dates around week boundaries and before date_bin's origin.
      for (const at of ['1999-12-26T23:59:59Z', '1999-12-27T00:00:00Z', '1999-12-31T23:59:59Z', '2000-01-02T23:59:59Z', '2000-01-03T00:00:00Z']) {
        await make(erin, erin.workspaceUuid, `Dated ${at}`, 'workspace', at)
      }
    }
  })
  afterAll(async () => t?.close())

  for (const table of ['agents', 'workflows'] as const) {
    it(`${table}: rows shared from another workspace count once, exactly as the list shows them`, async () => {
      const day = { date_from: '2026-05-04', date_to: '2026-05-04' }
      // erin (owner): Own, Frank private (owner sees all), To erin, To workspace, To both.
      expect(await count(table, day)).toBe(5)
      expect(await listed(table, erin)).toBe(5)
      // frank (member): Own, Frank private, To workspace, To both (through the workspace share).
      expect(await count(table, day, frank)).toBe(4)
      expect(await listed(table, frank)).toBe(4)
      expect(await count(table, { ...day, visibility: 'private' })).toBe(3)
      const series = ok(await metric(table, { calculation: 'time_series_count', granularity: 'daily', ...day }))
      expect(series).toMatchObject({ total: 5, data: [{ date: '2026-05-04', value: 5 }] })
      const average = ok(await metric(table, { calculation: 'accumulated_average', column: table === 'agents' ? 'usage_count' : 'trigger_count', ...day }))
      expect(average).toMatchObject({ total: 0, data: [{ value: 0, count: 5 }] })
    })

    it(`${table}: daily, weekly and monthly buckets are exact at midnight and week boundaries, also before 2000-01-03`, async () => {
      const span = { date_from: '1999-12-26', date_to: '2000-01-03' }
      const daily = ok(await metric(table, { calculation: 'time_series_count', granularity: 'daily', ...span })).data
      expect(daily.filter((point) => point.value !== 0)).toEqual([
        { date: '1999-12-26', value: 1 },
        { date: '1999-12-27', value: 1 },
        { date: '1999-12-31', value: 1 },
        { date: '2000-01-02', value: 1 },
        { date: '2000-01-03', value: 1 },
      ])
      expect(daily).toHaveLength(9)
      expect(ok(await metric(table, { calculation: 'time_series_count', granularity: 'weekly', ...span })).data).toEqual([
        { date: '1999-12-20', value: 1 },
        { date: '1999-12-27', value: 3 },
        { date: '2000-01-03', value: 1 },
      ])
      expect(ok(await metric(table, { calculation: 'time_series_count', granularity: 'monthly', ...span })).data).toEqual([
        { date: '1999-12-01', value: 3 },
        { date: '2000-01-01', value: 2 },
      ])
    })
  }

  it('threads and messages of an agent deleted later are no longer counted', async () => {
    const agentUuid = await createIn(t, 'agents', erin, erin.workspaceUuid, { name: 'Short-lived', visibility: 'workspace' })
    const agentId = await idOf(t, 'agents', agentUuid)
    const thread = await insertThread(t, { userId: erin.id, workspaceId: erin.wsId, agentId, at: '2026-07-01T10:00:00Z', messagesCount: 2 })
    for (const at of ['2026-07-01T10:00:00Z', '2026-07-02T10:00:00Z']) {
      await insertMessage(t, { threadId: thread.id, workspaceId: erin.wsId, at, tokens: [1, 1] })
    }
    const july = { date_from: '2026-07-01', date_to: '2026-07-31' }
    expect(await count('threads', july)).toBe(1)
    expect(await count('messages', july)).toBe(2)
    expect(ok(await metric('messages', { calculation: 'time_series_count', granularity: 'weekly', ...july })).total).toBe(2)
    const deleted = await t.http('DELETE', `/api/v1/agents/${agentUuid}`, { token: erin.token, headers: { 'X-Workspace-UUID': erin.workspaceUuid } })
    expect(deleted.status).toBe(204)
    expect(await count('threads', july)).toBe(0)
    expect(await count('messages', july)).toBe(0)
    expect(ok(await metric('messages', { calculation: 'time_series_count', granularity: 'weekly', ...july })).total).toBe(0)
  })
})
