/**
 * `POST /api/v1/workflows/{workflow_uuid}/share` (docs/api/tenancy.md, "Shares"):
 * the agents' share rules (test/agents-share.test.ts) on a workflow: sharing with a user or a
 * workspace at `read`, `write` or `admin`, what each level allows, removing a share, and the
 * checks on the entity. The answer is `{data: Workflow}`, as a retrieve's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { member, type Member } from './helpers/agents.ts'
import { expectStatus } from './helpers/expect.ts'
import { expectRefusedShareBodies, expectShareGuards, shareAs, toUser, type ShareTarget } from './helpers/shares.ts'
import { WORKFLOW_KEYS } from './helpers/workflows.ts'

describe('workflows.share (POST /api/v1/workflows/{workflow_uuid}/share)', () => {
  let t: TestApp
  /** Owner of the workflows. */
  let alice: Member
  /** Another tenant, the grantee of user shares. */
  let bob: Member
  /** A third user, in no workspace of alice's. */
  let zoe: Member
  let counter = 0
  let target: ShareTarget
  const share = (by: { token: string }, uuid: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    shareAs(target, by, uuid, body, headers)
  const privateWorkflow = async (name?: string, visibility = 'private') => {
    counter += 1
    const res = await t.http('POST', '/api/v1/workflows', {
      token: alice.token,
      body: { name: name ?? `Private flow ${counter}`, visibility },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data
  }
  const workflowPath = (uuid: string) => `/api/v1/workflows/${uuid}`
  const listed = async (user: { token: string }, headers: Record<string, string> = {}) =>
    (await t.http('GET', '/api/v1/workflows?per_page=100', { token: user.token, headers })).body.data.map((x: { uuid: string }) => x.uuid)
  const sharesOf = (uuid: string) =>
    t.sql(
      `select entity_type, entity_id::float8 as entity_id, permission from shares
       where resource_type = 'workflows' and resource_id = (select id from workflows where uuid = ?) order by id`,
      [uuid],
    )

  beforeAll(async () => {
    t = await createTestApp()
    target = { t, path: (uuid) => `/api/v1/workflows/${uuid}/share`, param: 'workflow_uuid' }
    alice = await member(t, await t.make.user({ name: 'Alice Flows' }))
    bob = await member(t, await t.make.user({ name: 'Bob Grantee' }))
    zoe = await member(t, await t.make.user({ name: 'Zoe Third' }))
  })
  afterAll(async () => t?.close())

  it('answers 200 {data: Workflow} (the retrieve shape) and stores the share', async () => {
    const w = await privateWorkflow()
    const res = await share(alice, w.uuid, toUser(bob, 'read'))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(Object.keys(res.body)).toEqual(['data'])
    expect(Object.keys(res.body.data).sort()).toEqual(WORKFLOW_KEYS)
    expect(res.body.data).toMatchObject({ uuid: w.uuid, name: w.name, is_owner: true, visibility: 'private' })
    expect(res.body.data.user).toMatchObject({ id: alice.id })
    expect(await sharesOf(w.uuid)).toEqual([{ entity_type: 'user', entity_id: bob.id, permission: 'read' }])
    // The agents' shares are untouched by a workflow's.
    expect(await t.sql(`select id from shares where resource_type = 'agents'`)).toEqual([])
  })

  it('a read share lets the grantee retrieve and list it, not update (403), not delete (403), not share (403)', async () => {
    const w = await privateWorkflow('Read shared flow')
    expectStatus(await t.http('GET', workflowPath(w.uuid), { token: bob.token }), 404, 'NOT_FOUND')
    expect(await listed(bob)).not.toContain(w.uuid)
    await share(alice, w.uuid, toUser(bob, 'read'))
    const seen = await t.http('GET', workflowPath(w.uuid), { token: bob.token })
    expect(seen.status).toBe(200)
    expect(seen.body.data).toMatchObject({ uuid: w.uuid, is_owner: false })
    expect(await listed(bob)).toContain(w.uuid)
    expectStatus(await t.http('PUT', workflowPath(w.uuid), { token: bob.token, body: { name: 'Bob edit' } }), 403, 'FORBIDDEN')
    expectStatus(await t.http('DELETE', workflowPath(w.uuid), { token: bob.token }), 403, 'FORBIDDEN')
    expectStatus(await share(bob, w.uuid, toUser(zoe, 'read')), 403, 'FORBIDDEN')
    expect((await t.http('POST', `${workflowPath(w.uuid)}/favorite`, { token: bob.token })).status).toBe(204)
    const [row] = await t.sql('select name, deleted_at from workflows where uuid = ?', [w.uuid])
    expect(row).toEqual({ name: 'Read shared flow', deleted_at: null })
    expect(await sharesOf(w.uuid)).toHaveLength(1)
  })

  it('a write share lets the grantee update, not delete (403) nor share (403)', async () => {
    const w = await privateWorkflow()
    await share(alice, w.uuid, toUser(bob, 'write'))
    const res = await t.http('PUT', workflowPath(w.uuid), { token: bob.token, body: { name: 'Bob edit', description: 'by bob' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data).toMatchObject({ name: 'Bob edit', is_owner: false })
    expectStatus(await t.http('DELETE', workflowPath(w.uuid), { token: bob.token }), 403, 'FORBIDDEN')
    expectStatus(await share(bob, w.uuid, toUser(zoe, 'read')), 403, 'FORBIDDEN')
  })

  it('an admin share lets the grantee share further and delete', async () => {
    const w = await privateWorkflow()
    await share(alice, w.uuid, toUser(bob, 'admin'))
    const further = await share(bob, w.uuid, toUser(zoe, 'read'))
    expect(further.status, JSON.stringify(further.body)).toBe(200)
    expect(further.body.data).toMatchObject({ uuid: w.uuid, is_owner: false })
    expect(await sharesOf(w.uuid)).toEqual([
      { entity_type: 'user', entity_id: bob.id, permission: 'admin' },
      { entity_type: 'user', entity_id: zoe.id, permission: 'read' },
    ])
    expect((await t.http('GET', workflowPath(w.uuid), { token: zoe.token })).status).toBe(200)
    expect((await t.http('DELETE', workflowPath(w.uuid), { token: bob.token })).status).toBe(204)
    expectStatus(await t.http('GET', workflowPath(w.uuid), { token: alice.token }), 404, 'NOT_FOUND')
  })

  it('changes the permission of an existing share in place, and null removes it: the private workflow is hidden again', async () => {
    const w = await privateWorkflow()
    await share(alice, w.uuid, toUser(bob, 'read'))
    const raised = await share(alice, w.uuid, toUser(bob, 'write'))
    expect(raised.status).toBe(200)
    expect(await sharesOf(w.uuid)).toEqual([{ entity_type: 'user', entity_id: bob.id, permission: 'write' }])
    const removed = await share(alice, w.uuid, toUser(bob, null))
    expect(removed.status, JSON.stringify(removed.body)).toBe(200)
    expect(removed.body.data.uuid).toBe(w.uuid)
    expect(await sharesOf(w.uuid)).toEqual([])
    expectStatus(await t.http('GET', workflowPath(w.uuid), { token: bob.token }), 404, 'NOT_FOUND')
    expect(await listed(bob)).not.toContain(w.uuid)
    // Removing a share that does not exist is a no-op.
    expect((await share(alice, w.uuid, toUser(bob, null))).status).toBe(200)
  })

  it('keeps one share row when shares of the same entity arrive at once (an upsert), with one of the permissions sent', async () => {
    const w = await privateWorkflow()
    const permissions = ['read', 'write', 'admin', 'read', 'write', 'admin', 'read', 'write']
    // Callers, not HTTP: every share starts in the same tick, so their statements interleave.
    const answers = await Promise.all(
      permissions.map((permission) =>
        t.as(alice).workflows.share({ workflow_uuid: w.uuid, entity_type: 'user', entity_id: bob.id, permission: permission as 'read' }),
      ),
    )
    expect(answers.every((res) => res.data.uuid === w.uuid)).toBe(true)
    const rows = await sharesOf(w.uuid)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ entity_type: 'user', entity_id: bob.id })
    expect(permissions).toContain(rows[0].permission)
    // Shares and removals at once: at most one row, never an error.
    await Promise.all(
      ['admin', null, 'read', null, 'write'].map((permission) =>
        t.as(alice).workflows.share({ workflow_uuid: w.uuid, entity_type: 'user', entity_id: bob.id, permission: permission as 'read' | null }),
      ),
    )
    expect((await sharesOf(w.uuid)).length).toBeLessThanOrEqual(1)
  })

  it('lets an admin grantee remove their own share: 200, then the workflow is hidden (404)', async () => {
    const w = await privateWorkflow()
    await share(alice, w.uuid, toUser(bob, 'admin'))
    const res = await share(bob, w.uuid, toUser(bob, null))
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data).toMatchObject({ uuid: w.uuid, is_owner: false })
    expectStatus(await t.http('GET', workflowPath(w.uuid), { token: bob.token }), 404, 'NOT_FOUND')
  })

  it('shares with a workspace the caller belongs to: its members see it (and may write) in that workspace only', async () => {
    const w = await privateWorkflow()
    const team = await t.make.workspace(alice, { name: 'Flow team' })
    await t.make.member(team, alice, zoe, 'member')
    const inTeam = { 'X-Workspace-UUID': team.uuid }
    expectStatus(await t.http('GET', workflowPath(w.uuid), { token: zoe.token, headers: inTeam }), 404, 'NOT_FOUND')
    const res = await share(alice, w.uuid, { entity_type: 'workspace', entity_id: team.uuid, permission: 'write' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const [teamRow] = await t.sql('select id::float8 as id from workspaces where uuid = ?', [team.uuid])
    expect(await sharesOf(w.uuid)).toEqual([{ entity_type: 'workspace', entity_id: teamRow.id, permission: 'write' }])
    expect((await t.http('GET', workflowPath(w.uuid), { token: zoe.token, headers: inTeam })).status).toBe(200)
    expect(await listed(zoe, inTeam)).toContain(w.uuid)
    const edit = await t.http('PUT', workflowPath(w.uuid), { token: zoe.token, headers: inTeam, body: { name: 'Team edit' } })
    expect(edit.status, JSON.stringify(edit.body)).toBe(200)
    expectStatus(await t.http('DELETE', workflowPath(w.uuid), { token: zoe.token, headers: inTeam }), 403, 'FORBIDDEN')
    // Outside that workspace context the share does not apply.
    expectStatus(await t.http('GET', workflowPath(w.uuid), { token: zoe.token }), 404, 'NOT_FOUND')
    expect(await listed(zoe)).not.toContain(w.uuid)
  })

  it('refuses an unknown user, a user of another service scope, the owner, and a workspace the caller is not in: 400 naming entity_id', async () => {
    const w = await privateWorkflow()
    await expectRefusedShareBodies(target, w.uuid, alice, bob, 'Bob')
    expect(await sharesOf(w.uuid)).toEqual([])
  })

  it("answers 404 for another tenant's workflow, 401 without a token, 403 to a read-only token, and shares nothing", async () => {
    const w = await privateWorkflow('Hidden flow target')
    await expectShareGuards(target, w.uuid, alice, bob, 'Hidden')
    expect(await sharesOf(w.uuid)).toEqual([])
  })

  it('a workspace member who sees a workspace-visible workflow (read) may not share it (403)', async () => {
    const w = await privateWorkflow('Team visible flow', 'workspace')
    await t.make.member(alice.workspaceUuid, alice, bob, 'member')
    try {
      const inTeam = { 'X-Workspace-UUID': alice.workspaceUuid }
      expect((await t.http('GET', workflowPath(w.uuid), { token: bob.token, headers: inTeam })).status).toBe(200)
      expectStatus(await share(bob, w.uuid, toUser(zoe, 'admin'), inTeam), 403, 'FORBIDDEN')
      expect(await sharesOf(w.uuid)).toEqual([])
    } finally {
      await t.sql('delete from workspace_members where user_id = ? and workspace_id = ?', [bob.id, alice.wsId])
    }
  })

  it('works through the tRPC caller', async () => {
    const w = await privateWorkflow()
    const res = await t.as(alice).workflows.share({ workflow_uuid: w.uuid, entity_type: 'user', entity_id: zoe.id, permission: 'write' })
    expect(res.data).toMatchObject({ uuid: w.uuid, is_owner: true })
    expect(await sharesOf(w.uuid)).toEqual([{ entity_type: 'user', entity_id: zoe.id, permission: 'write' }])
  })
})
