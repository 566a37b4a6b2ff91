/**
 * `POST /api/v1/agents/{agent_uuid}/share` (specification: "Share (element of Agent.shares)";
 * docs/api/tenancy.md): sharing with a user or a workspace at `read`, `write` or `admin`, what each
 * level allows, removing a share, who sees `shares`, and the checks on the entity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { member, type Member } from './helpers/agents.ts'
import { expectStatus, USER_KEYS, WORKSPACE_KEYS } from './helpers/expect.ts'
import { expectRefusedShareBodies, expectShareGuards, shareAs, toUser, type ShareTarget } from './helpers/shares.ts'

describe('agents.share (POST /api/v1/agents/{agent_uuid}/share)', () => {
  let t: TestApp
  /** Owner of the agents. */
  let alice: Member
  /** Another tenant, the grantee of user shares. */
  let bob: Member
  /** A third user, in no workspace of alice's. */
  let zoe: Member
  let counter = 0
  let target: ShareTarget
  const share = (by: { token: string }, uuid: string, body: Record<string, unknown>) => shareAs(target, by, uuid, body)
  const privateAgent = async (name?: string) => {
    counter += 1
    const res = await t.http('POST', '/api/v1/agents', { token: alice.token, body: { name: name ?? `Private ${counter}`, visibility: 'private' } })
    expect(res.status).toBe(201)
    return res.body.data
  }
  const agentPath = (uuid: string) => `/api/v1/agents/${uuid}`

  beforeAll(async () => {
    t = await createTestApp()
    target = { t, path: (uuid) => `/api/v1/agents/${uuid}/share`, param: 'agent_uuid' }
    alice = await member(t, await t.make.user({ name: 'Alice Sharer' }))
    bob = await member(t, await t.make.user({ name: 'Bob Grantee' }))
    zoe = await member(t, await t.make.user({ name: 'Zoe Third' }))
  })
  afterAll(async () => t?.close())

  it('answers 200 {data: Agent} with the share listed as {entity_type, entity (a User), permission}', async () => {
    const a = await privateAgent()
    const res = await share(alice, a.uuid, toUser(bob, 'read'))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.uuid).toBe(a.uuid)
    expect(res.body.data.shares).toHaveLength(1)
    const [s] = res.body.data.shares
    expect(Object.keys(s).sort()).toEqual(['entity', 'entity_type', 'permission'])
    expect(s).toMatchObject({ entity_type: 'user', permission: 'read' })
    expect(Object.keys(s.entity).sort()).toEqual(USER_KEYS)
    expect(s.entity).toMatchObject({ id: bob.id, name: 'Bob Grantee', email: bob.email, primary_workspace: null })
    const [row] = await t.sql(`select entity_type, entity_id::float8 as entity_id, permission from shares where resource_type = 'agents'`)
    expect(row).toEqual({ entity_type: 'user', entity_id: bob.id, permission: 'read' })
  })

  it('a read share lets the grantee retrieve and list it, not update (403), not delete (403), not share (403)', async () => {
    const a = await privateAgent('Read shared')
    expectStatus(await t.http('GET', agentPath(a.uuid), { token: bob.token }), 404, 'NOT_FOUND')
    await share(alice, a.uuid, toUser(bob, 'read'))
    const seen = await t.http('GET', agentPath(a.uuid), { token: bob.token })
    expect(seen.status).toBe(200)
    // Only callers with admin permission see the shares.
    expect(seen.body.data).toMatchObject({ is_owner: false, shares: [] })
    const list = await t.http('GET', '/api/v1/agents?per_page=100', { token: bob.token })
    expect(list.body.data.map((x: { uuid: string }) => x.uuid)).toContain(a.uuid)
    expectStatus(await t.http('PUT', agentPath(a.uuid), { token: bob.token, body: { name: 'Bob edit' } }), 403, 'FORBIDDEN')
    expectStatus(await t.http('DELETE', agentPath(a.uuid), { token: bob.token }), 403, 'FORBIDDEN')
    expectStatus(await share(bob, a.uuid, toUser(zoe, 'read')), 403, 'FORBIDDEN')
    expect((await t.http('POST', `${agentPath(a.uuid)}/favorite`, { token: bob.token })).status).toBe(204)
    const [row] = await t.sql('select name, deleted_at from agents where uuid = ?', [a.uuid])
    expect(row).toEqual({ name: 'Read shared', deleted_at: null })
  })

  it('a write share lets the grantee update, not delete (403) nor share (403)', async () => {
    const a = await privateAgent()
    await share(alice, a.uuid, toUser(bob, 'write'))
    const res = await t.http('PUT', agentPath(a.uuid), { token: bob.token, body: { name: 'Bob edit', description: 'by bob' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data).toMatchObject({ name: 'Bob edit', is_owner: false, shares: [] })
    expectStatus(await t.http('DELETE', agentPath(a.uuid), { token: bob.token }), 403, 'FORBIDDEN')
    expectStatus(await share(bob, a.uuid, toUser(zoe, 'read')), 403, 'FORBIDDEN')
  })

  it('an admin share lets the grantee see the shares, share further and delete', async () => {
    const a = await privateAgent()
    await share(alice, a.uuid, toUser(bob, 'admin'))
    const seen = await t.http('GET', agentPath(a.uuid), { token: bob.token })
    expect(seen.body.data.shares.map((s: { entity: { id: number } }) => s.entity.id)).toEqual([bob.id])
    const further = await share(bob, a.uuid, toUser(zoe, 'read'))
    expect(further.status, JSON.stringify(further.body)).toBe(200)
    expect(further.body.data.shares.map((s: { entity: { id: number }; permission: string }) => [s.entity.id, s.permission])).toEqual([
      [bob.id, 'admin'],
      [zoe.id, 'read'],
    ])
    expect((await t.http('DELETE', agentPath(a.uuid), { token: bob.token })).status).toBe(204)
    expectStatus(await t.http('GET', agentPath(a.uuid), { token: alice.token }), 404, 'NOT_FOUND')
  })

  it('changes the permission of an existing share in place, and null removes it: the private agent is hidden again', async () => {
    const a = await privateAgent()
    await share(alice, a.uuid, toUser(bob, 'read'))
    const raised = await share(alice, a.uuid, toUser(bob, 'write'))
    expect(raised.body.data.shares.map((s: { permission: string }) => s.permission)).toEqual(['write'])
    expect(await t.sql(`select count(*)::int as n from shares where resource_type = 'agents' and entity_id = ?`, [bob.id])).not.toEqual([{ n: 0 }])
    const removed = await share(alice, a.uuid, toUser(bob, null))
    expect(removed.status).toBe(200)
    expect(removed.body.data.shares).toEqual([])
    expectStatus(await t.http('GET', agentPath(a.uuid), { token: bob.token }), 404, 'NOT_FOUND')
    const list = await t.http('GET', '/api/v1/agents?per_page=100', { token: bob.token })
    expect(list.body.data.map((x: { uuid: string }) => x.uuid)).not.toContain(a.uuid)
    // Removing a share that does not exist is a no-op.
    expect((await share(alice, a.uuid, toUser(bob, null))).status).toBe(200)
  })

  it('lets an admin grantee remove their own share: 200 with shares hidden, then the agent is hidden (404)', async () => {
    const a = await privateAgent()
    await share(alice, a.uuid, toUser(bob, 'admin'))
    const res = await share(bob, a.uuid, toUser(bob, null))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data).toMatchObject({ uuid: a.uuid, shares: [] })
    expectStatus(await t.http('GET', agentPath(a.uuid), { token: bob.token }), 404, 'NOT_FOUND')
  })

  it('shares with a workspace the caller belongs to: its members see it in that workspace; the entity is a Workspace', async () => {
    const a = await privateAgent()
    const team = await t.make.workspace(alice, { name: 'Shared team' })
    await t.make.member(team, alice, zoe, 'member')
    const res = await share(alice, a.uuid, { entity_type: 'workspace', entity_id: team.uuid, permission: 'write' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const [s] = res.body.data.shares
    expect(s).toMatchObject({ entity_type: 'workspace', permission: 'write', entity: { uuid: team.uuid, name: 'Shared team', user: null } })
    expect(Object.keys(s.entity).sort()).toEqual(WORKSPACE_KEYS)
    const inTeam = { 'X-Workspace-UUID': team.uuid }
    expect((await t.http('GET', agentPath(a.uuid), { token: zoe.token, headers: inTeam })).status).toBe(200)
    const list = await t.http('GET', '/api/v1/agents', { token: zoe.token, headers: inTeam })
    expect(list.body.data.map((x: { uuid: string }) => x.uuid)).toContain(a.uuid)
    const edit = await t.http('PUT', agentPath(a.uuid), { token: zoe.token, headers: inTeam, body: { name: 'Team edit' } })
    expect(edit.status).toBe(200)
    // Outside that workspace context the share does not apply.
    expectStatus(await t.http('GET', agentPath(a.uuid), { token: zoe.token }), 404, 'NOT_FOUND')
  })

  it('refuses an unknown user, a user of another service scope, the owner, and a workspace the caller is not in: 400 naming entity_id', async () => {
    const a = await privateAgent()
    await expectRefusedShareBodies(target, a.uuid, alice, bob, 'Bob')
    expect(await t.sql(`select id from shares where resource_type = 'agents' and resource_id = (select id from agents where uuid = ?)`, [a.uuid])).toEqual([])
  })

  it("answers 404 for another tenant's agent, 401 without a token, 403 to a read-only token, and shares nothing", async () => {
    const a = await privateAgent('Hidden share target')
    await expectShareGuards(target, a.uuid, alice, bob, 'Hidden')
    expect(await t.sql(`select id from shares where resource_type = 'agents' and resource_id = (select id from agents where uuid = ?)`, [a.uuid])).toEqual([])
  })

  it('a workspace member with read access (workspace visibility) may not share (403)', async () => {
    const res = await t.http('POST', '/api/v1/agents', { token: alice.token, body: { name: 'Team visible', visibility: 'workspace' } })
    const a = res.body.data
    await t.make.member(alice.workspaceUuid, alice, bob, 'member')
    try {
      const inTeam = { 'X-Workspace-UUID': alice.workspaceUuid }
      expectStatus(
        await t.http('POST', `${agentPath(a.uuid)}/share`, { token: bob.token, headers: inTeam, body: toUser(zoe, 'admin') }),
        403,
        'FORBIDDEN',
      )
    } finally {
      await t.sql('delete from workspace_members where user_id = ? and workspace_id = ?', [bob.id, alice.wsId])
    }
  })

  it('works through the tRPC caller', async () => {
    const a = await privateAgent()
    const res = await t.as(alice).agents.share({ agent_uuid: a.uuid, entity_type: 'user', entity_id: zoe.id, permission: 'write' })
    expect(res.data.shares).toEqual([expect.objectContaining({ entity_type: 'user', permission: 'write', entity: expect.objectContaining({ id: zoe.id }) })])
  })
})
