/**
 * Workspace members over REST (src/tenancy/members.service.ts, docs/api/tenancy.md):
 * `GET/POST/PUT/DELETE /api/v1/workspaces/{uuid}/members[/{user_id}]`. Any member lists; owners
 * and admins add, change and remove; only an owner grants or touches the `owner` role; the
 * creator stays an owner; a member may leave.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TWorkspace } from '../src/access/user-workspace.schema.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { expectInvalid, expectStatus, ISO_Z, USER_KEYS } from './helpers/expect.ts'

const MEMBER_KEYS = ['created_at', 'role', 'updated_at', 'user']

describe('workspace members', () => {
  let t: TestApp
  /** Creator (owner) of every team workspace. */
  let alice: TestUser
  /** Another tenant: member of none of them. */
  let bob: TestUser
  /** A second owner. */
  let olivia: TestUser
  let adam: TestUser
  let mia: TestUser
  /** Not a member anywhere but their own workspace; added by the tests. */
  let nina: TestUser
  let counter = 0

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Creator' })
    bob = await t.make.user({ name: 'Bob Outsider' })
    olivia = await t.make.user({ name: 'Olivia Owner' })
    adam = await t.make.user({ name: 'Adam Admin' })
    mia = await t.make.user({ name: 'Mia Member' })
    nina = await t.make.user({ name: 'Nina Newcomer' })
  })
  afterAll(async () => t?.close())

  /** A fresh workspace of alice's: olivia owner, adam admin, mia member (in that order). */
  async function team(): Promise<TWorkspace> {
    counter += 1
    const ws = await t.make.workspace(alice, { name: `Team ${counter}` })
    await t.make.member(ws, alice, olivia, 'owner')
    await t.make.member(ws, alice, adam, 'admin')
    await t.make.member(ws, alice, mia, 'member')
    return ws
  }
  const members = (ws: { uuid: string }) => `/api/v1/workspaces/${ws.uuid}/members`
  const member = (ws: { uuid: string }, user: { id: number } | string) =>
    `/api/v1/workspaces/${ws.uuid}/members/${typeof user === 'string' ? user : user.id}`
  /** `ok`, or the tRPC code a procedure call failed with. */
  const outcome = (call: Promise<unknown>): Promise<string> =>
    call.then(
      () => 'ok',
      (error: { code?: string }) => error.code ?? String(error),
    )
  const rolesOf = async (ws: { uuid: string }): Promise<[number, string][]> => {
    const res = await t.http('GET', `${members(ws)}?per_page=100`, { token: alice.token })
    expect(res.status).toBe(200)
    return res.body.data.map((m: { user: { id: number }; role: string }) => [m.user.id, m.role])
  }

  describe('members.list (GET /api/v1/workspaces/{workspace_uuid}/members)', () => {
    it('answers every member, oldest first, in the paginator shape with shallow users', async () => {
      const ws = await team()
      const res = await t.http('GET', members(ws), { token: alice.token })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body)).toEqual(['data', 'links', 'meta'])
      expect(res.body.data.map((m: { user: { id: number }; role: string }) => [m.user.id, m.role])).toEqual([
        [alice.id, 'owner'],
        [olivia.id, 'owner'],
        [adam.id, 'admin'],
        [mia.id, 'member'],
      ])
      for (const item of res.body.data) {
        expect(Object.keys(item).sort()).toEqual(MEMBER_KEYS)
        expect(Object.keys(item.user).sort()).toEqual(USER_KEYS)
        expect(item.user.primary_workspace).toBeNull()
        expect(item.created_at).toMatch(ISO_Z)
        expect(item.updated_at).toMatch(ISO_Z)
      }
      expect(res.body.data[3].user).toMatchObject({
        id: mia.id,
        name: 'Mia Member',
        first_name: 'Mia',
        last_name: 'Member',
        email: mia.email,
      })
      const path = `${t.config.appUrl}${members(ws)}`
      expect(res.body.meta).toEqual({ current_page: 1, from: 1, last_page: 1, path, per_page: 15, to: 4, total: 4 })
      expect(res.body.links).toEqual({ first: `${path}?page=1&per_page=15`, last: `${path}?page=1&per_page=15`, prev: null, next: null })
    })

    it('pages with per_page and page', async () => {
      const ws = await team()
      const res = await t.http('GET', `${members(ws)}?per_page=3&page=2`, { token: alice.token })
      expect(res.status).toBe(200)
      expect(res.body.data.map((m: { user: { id: number } }) => m.user.id)).toEqual([mia.id])
      expect(res.body.meta).toMatchObject({ current_page: 2, from: 4, to: 4, last_page: 2, per_page: 3, total: 4 })
      expect(res.body.links.prev).toContain('page=1&per_page=3')
      expect(res.body.links.next).toBeNull()
    })

    it('lets a plain member list', async () => {
      const ws = await team()
      const res = await t.http('GET', members(ws), { token: mia.token })
      expect(res.status).toBe(200)
      expect(res.body.meta.total).toBe(4)
    })

    it("answers 404 for another tenant's workspace, saying nothing of it", async () => {
      const ws = await team()
      const res = await t.http('GET', members(ws), { token: bob.token })
      expectStatus(res, 404, 'NOT_FOUND')
      const text = JSON.stringify(res.body)
      for (const secret of [ws.uuid, ws.name, alice.email, mia.email]) expect(text).not.toContain(secret)
    })

    it.each([
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
    ])('answers 400 naming the parameter for %s', async (query, path) => {
      const ws = await team()
      expectInvalid(await t.http('GET', `${members(ws)}?${query}`, { token: alice.token }), path)
    })

    it('answers 400 naming workspace_uuid for a malformed uuid, and 401 without a token', async () => {
      expectInvalid(await t.http('GET', '/api/v1/workspaces/0123-abcd/members', { token: alice.token }), 'workspace_uuid')
      expectStatus(await t.http('GET', members({ uuid: alice.workspaceUuid })), 401, 'UNAUTHORIZED')
    })
  })

  describe('members.add (POST /api/v1/workspaces/{workspace_uuid}/members)', () => {
    it('adds by e-mail (any case) as `member` by default, answering 201 with the membership', async () => {
      const ws = await team()
      const res = await t.http('POST', members(ws), { token: alice.token, body: { email: nina.email.toUpperCase() } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      expect(Object.keys(res.body.data).sort()).toEqual(MEMBER_KEYS)
      expect(res.body.data).toMatchObject({
        role: 'member',
        user: { id: nina.id, email: nina.email, name: 'Nina Newcomer', primary_workspace: null },
      })
      expect(res.body.data.created_at).toMatch(ISO_Z)
      expect(await rolesOf(ws)).toContainEqual([nina.id, 'member'])

      const seen = await t.http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: nina.token })
      expect(seen.status).toBe(200)
      expect(seen.body.data).toMatchObject({ uuid: ws.uuid, is_owner: false, user: { id: alice.id } })
      const listed = await t.http('GET', '/api/v1/workspaces?per_page=100', { token: nina.token })
      expect(listed.body.data.map((w: { uuid: string }) => w.uuid)).toContain(ws.uuid)
    })

    it('adds by user_id with a role', async () => {
      const ws = await team()
      const res = await t.http('POST', members(ws), { token: alice.token, body: { user_id: nina.id, role: 'admin' } })
      expect(res.status).toBe(201)
      expect(res.body.data).toMatchObject({ role: 'admin', user: { id: nina.id } })
      const update = await t.http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: nina.token, body: { name: 'Renamed by Nina' } })
      expect(update.status).toBe(200)
    })

    it('lets an owner grant owner', async () => {
      const ws = await team()
      const res = await t.http('POST', members(ws), { token: olivia.token, body: { user_id: nina.id, role: 'owner' } })
      expect(res.status).toBe(201)
      expect(res.body.data.role).toBe('owner')
    })

    it('lets an admin add members and admins, but not owners (403, nothing added)', async () => {
      const ws = await team()
      const other = await t.make.user()
      expect((await t.http('POST', members(ws), { token: adam.token, body: { user_id: nina.id } })).status).toBe(201)
      expect((await t.http('POST', members(ws), { token: adam.token, body: { user_id: other.id, role: 'admin' } })).status).toBe(201)
      const third = await t.make.user()
      expectStatus(await t.http('POST', members(ws), { token: adam.token, body: { user_id: third.id, role: 'owner' } }), 403, 'FORBIDDEN')
      expect((await rolesOf(ws)).map(([id]) => id)).not.toContain(third.id)
    })

    it('answers 403 to a plain member, and adds nothing', async () => {
      const ws = await team()
      expectStatus(await t.http('POST', members(ws), { token: mia.token, body: { user_id: nina.id } }), 403, 'FORBIDDEN')
      await expect(t.as(mia).workspaces.members.add({ workspace_uuid: ws.uuid, user_id: nina.id, role: 'member' })).rejects.toMatchObject({
        code: 'FORBIDDEN',
      })
      expect((await rolesOf(ws)).map(([id]) => id)).not.toContain(nina.id)
    })

    it('answers 409 for an existing membership, by e-mail or user_id, the creator included', async () => {
      const ws = await team()
      expectStatus(await t.http('POST', members(ws), { token: alice.token, body: { email: mia.email } }), 409, 'CONFLICT')
      expectStatus(await t.http('POST', members(ws), { token: alice.token, body: { user_id: adam.id, role: 'owner' } }), 409, 'CONFLICT')
      expectStatus(await t.http('POST', members(ws), { token: alice.token, body: { user_id: alice.id } }), 409, 'CONFLICT')
      expect(await rolesOf(ws)).toEqual([
        [alice.id, 'owner'],
        [olivia.id, 'owner'],
        [adam.id, 'admin'],
        [mia.id, 'member'],
      ])
    })

    it('adds a user once when the same addition arrives several times at once: one succeeds, the others are 409', async () => {
      const ws = await team()
      const outcomes = await Promise.all(
        Array.from({ length: 4 }, () =>
          outcome(t.as(alice).workspaces.members.add({ workspace_uuid: ws.uuid, user_id: nina.id, role: 'admin' })),
        ),
      )
      expect(outcomes.sort()).toEqual(['CONFLICT', 'CONFLICT', 'CONFLICT', 'ok'])
      expect((await rolesOf(ws)).filter(([id]) => id === nina.id)).toEqual([[nina.id, 'admin']])
    })

    it('answers 400 naming email for an unknown e-mail, and user_id for an unknown id', async () => {
      const ws = await team()
      const byEmail = await t.http('POST', members(ws), { token: alice.token, body: { email: 'nobody@example.com' } })
      expectInvalid(byEmail, 'email')
      expect(byEmail.body.issues).toEqual([{ code: 'custom', path: ['email'], message: 'No user with this value exists' }])
      expectInvalid(await t.http('POST', members(ws), { token: alice.token, body: { user_id: 2_000_000_000 } }), 'user_id')
    })

    it('does not find users of another service scope', async () => {
      const scoped = await t.make.user({ serviceKey: 'acme-service-key-0123456789' })
      const ws = await team()
      expectInvalid(await t.http('POST', members(ws), { token: alice.token, body: { email: scoped.email } }), 'email')
      expectInvalid(await t.http('POST', members(ws), { token: alice.token, body: { user_id: scoped.id } }), 'user_id')
    })

    it.each([
      ['both email and user_id', (): Record<string, unknown> => ({ email: nina.email, user_id: nina.id }), 'email'],
      ['neither email nor user_id', (): Record<string, unknown> => ({ role: 'member' }), 'email'],
      ['a malformed e-mail', (): Record<string, unknown> => ({ email: 'not-an-email' }), 'email'],
      ['user_id as the string "5"', (): Record<string, unknown> => ({ user_id: String(nina.id) }), 'user_id'],
      ['user_id 0', (): Record<string, unknown> => ({ user_id: 0 }), 'user_id'],
      ['user_id not an integer', (): Record<string, unknown> => ({ user_id: 1.5 }), 'user_id'],
      ['an unknown role', (): Record<string, unknown> => ({ user_id: nina.id, role: 'superuser' }), 'role'],
    ])('answers 400 naming the field for %s, adding nobody', async (_label, body, path) => {
      const ws = await team()
      expectInvalid(await t.http('POST', members(ws), { token: alice.token, body: body() }), path)
      expect(await rolesOf(ws)).toHaveLength(4)
    })

    it('answers 400 for an unknown field', async () => {
      const ws = await team()
      const res = await t.http('POST', members(ws), { token: alice.token, body: { user_id: nina.id, permission: 'all' } })
      expect(res.status).toBe(400)
      expect(res.body.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['permission'] })])
    })

    it("answers 404 for another tenant's workspace, saying nothing of it, and adds nobody", async () => {
      const ws = await team()
      const res = await t.http('POST', members(ws), { token: bob.token, body: { user_id: bob.id, role: 'owner' } })
      expectStatus(res, 404, 'NOT_FOUND')
      expect(JSON.stringify(res.body)).not.toContain(ws.uuid)
      expect((await rolesOf(ws)).map(([id]) => id)).not.toContain(bob.id)
    })

    it('answers 400 for a malformed workspace uuid, and 401 without a token', async () => {
      expectInvalid(
        await t.http('POST', '/api/v1/workspaces/0123-abcd/members', { token: alice.token, body: { user_id: nina.id } }),
        'workspace_uuid',
      )
      expectStatus(await t.http('POST', members({ uuid: alice.workspaceUuid }), { body: { user_id: nina.id } }), 401, 'UNAUTHORIZED')
    })
  })

  describe('members.update (PUT /api/v1/workspaces/{workspace_uuid}/members/{user_id})', () => {
    it("lets an owner change a member's role, with effect on what they may do", async () => {
      const ws = await team()
      const res = await t.http('PUT', member(ws, mia), { token: alice.token, body: { role: 'admin' } })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body.data).sort()).toEqual(MEMBER_KEYS)
      expect(res.body.data).toMatchObject({ role: 'admin', user: { id: mia.id, primary_workspace: null } })
      expect(res.body.data.updated_at).toMatch(ISO_Z)
      expect((await t.http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: mia.token, body: { name: 'Mia can' } })).status).toBe(200)

      const demoted = await t.http('PUT', member(ws, adam), { token: olivia.token, body: { role: 'member' } })
      expect(demoted.body.data.role).toBe('member')
      expect((await t.http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: adam.token, body: { name: 'Adam cannot' } })).status).toBe(403)
      expect(await rolesOf(ws)).toEqual([
        [alice.id, 'owner'],
        [olivia.id, 'owner'],
        [adam.id, 'member'],
        [mia.id, 'admin'],
      ])
    })

    it('lets an owner promote to owner and demote another (non-creator) owner', async () => {
      const ws = await team()
      expect((await t.http('PUT', member(ws, adam), { token: alice.token, body: { role: 'owner' } })).body.data.role).toBe('owner')
      expect((await t.http('PUT', member(ws, olivia), { token: alice.token, body: { role: 'admin' } })).body.data.role).toBe('admin')
    })

    it('lets an admin change members and admins, but not grant owner nor touch an owner (403)', async () => {
      const ws = await team()
      expect((await t.http('PUT', member(ws, mia), { token: adam.token, body: { role: 'admin' } })).status).toBe(200)
      expect((await t.http('PUT', member(ws, mia), { token: adam.token, body: { role: 'member' } })).status).toBe(200)
      expectStatus(await t.http('PUT', member(ws, mia), { token: adam.token, body: { role: 'owner' } }), 403, 'FORBIDDEN')
      expectStatus(await t.http('PUT', member(ws, adam), { token: adam.token, body: { role: 'owner' } }), 403, 'FORBIDDEN')
      expectStatus(await t.http('PUT', member(ws, olivia), { token: adam.token, body: { role: 'member' } }), 403, 'FORBIDDEN')
      expect(await rolesOf(ws)).toEqual([
        [alice.id, 'owner'],
        [olivia.id, 'owner'],
        [adam.id, 'admin'],
        [mia.id, 'member'],
      ])
    })

    it('answers 403 to a plain member, even for their own role', async () => {
      const ws = await team()
      expectStatus(await t.http('PUT', member(ws, adam), { token: mia.token, body: { role: 'member' } }), 403, 'FORBIDDEN')
      expectStatus(await t.http('PUT', member(ws, mia), { token: mia.token, body: { role: 'admin' } }), 403, 'FORBIDDEN')
      expect((await rolesOf(ws))[3]).toEqual([mia.id, 'member'])
    })

    it('a user_id in the body cannot redirect the change: the path wins', async () => {
      const ws = await team()
      const res = await t.http('PUT', member(ws, mia), { token: alice.token, body: { user_id: adam.id, role: 'owner' } })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ role: 'owner', user: { id: mia.id } })
      expect((await rolesOf(ws))[2]).toEqual([adam.id, 'admin'])
    })

    it('answers 409 when the creator would stop being an owner, whoever asks', async () => {
      const ws = await team()
      for (const by of [olivia, alice]) {
        for (const role of ['admin', 'member']) {
          expectStatus(await t.http('PUT', member(ws, alice), { token: by.token, body: { role } }), 409, 'CONFLICT')
        }
      }
      const same = await t.http('PUT', member(ws, alice), { token: alice.token, body: { role: 'owner' } })
      expect(same.status).toBe(200)
      expect(same.body.data.role).toBe('owner')
      expect((await rolesOf(ws))[0]).toEqual([alice.id, 'owner'])
    })

    it('checks each of two owners demoting each other at once against the other change: one succeeds, one is 403, one of them stays owner', async () => {
      for (let round = 0; round < 3; round++) {
        const ws = await team()
        await t.make.member(ws, alice, nina, 'owner')
        // Callers, not HTTP: both changes start in the same tick, so their statements interleave.
        const outcomes = await Promise.all([
          outcome(t.as(olivia).workspaces.members.update({ workspace_uuid: ws.uuid, user_id: nina.id, role: 'admin' })),
          outcome(t.as(nina).workspaces.members.update({ workspace_uuid: ws.uuid, user_id: olivia.id, role: 'admin' })),
        ])
        expect(outcomes.sort()).toEqual(['FORBIDDEN', 'ok'])
        const roles = new Map(await rolesOf(ws))
        expect([roles.get(olivia.id), roles.get(nina.id)].sort()).toEqual(['admin', 'owner'])
        expect(roles.get(alice.id)).toBe('owner')
      }
    })

    it("never lets an admin's change land on a member an owner promotes to owner at the same time", async () => {
      for (let round = 0; round < 3; round++) {
        const ws = await team()
        const [byAdmin, byOwner] = await Promise.all([
          outcome(t.as(adam).workspaces.members.update({ workspace_uuid: ws.uuid, user_id: mia.id, role: 'admin' })),
          outcome(t.as(alice).workspaces.members.update({ workspace_uuid: ws.uuid, user_id: mia.id, role: 'owner' })),
        ])
        // In either order the promotion lands last: after it, the admin may no longer touch mia.
        expect(byOwner).toBe('ok')
        expect(['ok', 'FORBIDDEN']).toContain(byAdmin)
        expect(new Map(await rolesOf(ws)).get(mia.id)).toBe('owner')
      }
    })

    it('answers 404 for a user who is not a member', async () => {
      const ws = await team()
      expectStatus(await t.http('PUT', member(ws, nina), { token: alice.token, body: { role: 'admin' } }), 404, 'NOT_FOUND')
      expectStatus(await t.http('PUT', member(ws, '2000000000'), { token: alice.token, body: { role: 'admin' } }), 404, 'NOT_FOUND')
    })

    it.each([
      ['a user_id that is not a number', 'abc', { role: 'admin' }, 'user_id'],
      ['user_id 0', '0', { role: 'admin' }, 'user_id'],
      ['a user_id beyond int4', '2147483648', { role: 'admin' }, 'user_id'],
      ['a missing role', null, {}, 'role'],
      ['an unknown role', null, { role: 'root' }, 'role'],
    ])('answers 400 naming the field for %s', async (_label, userId, body, path) => {
      const ws = await team()
      expectInvalid(await t.http('PUT', member(ws, userId ?? mia), { token: alice.token, body }), path)
    })

    it('answers 400 naming workspace_uuid for a malformed workspace uuid', async () => {
      expectInvalid(
        await t.http('PUT', '/api/v1/workspaces/0123-abcd/members/1', { token: alice.token, body: { role: 'admin' } }),
        'workspace_uuid',
      )
    })

    it('answers 400 for an unknown field', async () => {
      const ws = await team()
      const res = await t.http('PUT', member(ws, mia), { token: alice.token, body: { role: 'admin', note: 'x' } })
      expect(res.status).toBe(400)
      expect(res.body.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['note'] })])
    })

    it("answers 404 for another tenant's workspace, saying nothing of it, and changes nothing", async () => {
      const ws = await team()
      const res = await t.http('PUT', member(ws, mia), { token: bob.token, body: { role: 'owner' } })
      expectStatus(res, 404, 'NOT_FOUND')
      expect(JSON.stringify(res.body)).not.toContain(ws.uuid)
      expect((await rolesOf(ws))[3]).toEqual([mia.id, 'member'])
    })

    it('answers 401 without a token', async () => {
      const ws = await team()
      expectStatus(await t.http('PUT', member(ws, mia), { body: { role: 'admin' } }), 401, 'UNAUTHORIZED')
    })
  })

  describe('members.remove (DELETE /api/v1/workspaces/{workspace_uuid}/members/{user_id})', () => {
    it('lets an owner remove a member (204); the removed member then gets 404 on the workspace', async () => {
      const ws = await team()
      const res = await t.http('DELETE', member(ws, mia), { token: alice.token })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await rolesOf(ws)).map(([id]) => id)).toEqual([alice.id, olivia.id, adam.id])
      const retrieve = await t.http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: mia.token })
      expect(retrieve.status).toBe(404)
      expect(JSON.stringify(retrieve.body)).not.toContain(ws.name)
      expect((await t.http('GET', members(ws), { token: mia.token })).status).toBe(404)
      const listed = await t.http('GET', '/api/v1/workspaces?per_page=100', { token: mia.token })
      expect(listed.body.data.map((w: { uuid: string }) => w.uuid)).not.toContain(ws.uuid)
      expectStatus(await t.http('DELETE', member(ws, mia), { token: alice.token }), 404, 'NOT_FOUND')
    })

    it('lets a member leave (DELETE self, 204), after which the workspace is 404 for them', async () => {
      const ws = await team()
      for (const leaver of [mia, adam, olivia]) {
        expect((await t.http('DELETE', member(ws, leaver), { token: leaver.token })).status).toBe(204)
        expect((await t.http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: leaver.token })).status).toBe(404)
      }
      expect(await rolesOf(ws)).toEqual([[alice.id, 'owner']])
    })

    it('lets an admin remove members and admins, but not owners (403)', async () => {
      const ws = await team()
      await t.make.member(ws, alice, nina, 'admin')
      expect((await t.http('DELETE', member(ws, mia), { token: adam.token })).status).toBe(204)
      expect((await t.http('DELETE', member(ws, nina), { token: adam.token })).status).toBe(204)
      expectStatus(await t.http('DELETE', member(ws, olivia), { token: adam.token }), 403, 'FORBIDDEN')
      expect(await rolesOf(ws)).toEqual([
        [alice.id, 'owner'],
        [olivia.id, 'owner'],
        [adam.id, 'admin'],
      ])
    })

    it('lets an owner remove another (non-creator) owner', async () => {
      const ws = await team()
      expect((await t.http('DELETE', member(ws, olivia), { token: alice.token })).status).toBe(204)
      expect((await t.http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: olivia.token })).status).toBe(404)
    })

    it('answers 403 when a plain member removes someone else', async () => {
      const ws = await team()
      expectStatus(await t.http('DELETE', member(ws, adam), { token: mia.token }), 403, 'FORBIDDEN')
      expectStatus(await t.http('DELETE', member(ws, alice), { token: mia.token }), 403, 'FORBIDDEN')
      expect(await rolesOf(ws)).toHaveLength(4)
    })

    it('checks an owner removing another who demotes them at the same time against the other change', async () => {
      for (let round = 0; round < 3; round++) {
        const ws = await team()
        await t.make.member(ws, alice, nina, 'owner')
        const [removal, demotion] = await Promise.all([
          outcome(t.as(olivia).workspaces.members.remove({ workspace_uuid: ws.uuid, user_id: nina.id })),
          outcome(t.as(nina).workspaces.members.update({ workspace_uuid: ws.uuid, user_id: olivia.id, role: 'member' })),
        ])
        const roles = new Map(await rolesOf(ws))
        if (removal === 'ok') {
          // Nina was gone when her change was checked.
          expect(demotion).toBe('NOT_FOUND')
          expect(roles.has(nina.id)).toBe(false)
          expect(roles.get(olivia.id)).toBe('owner')
        } else {
          // Olivia was a plain member when her removal was checked.
          expect([removal, demotion]).toEqual(['FORBIDDEN', 'ok'])
          expect(roles.get(olivia.id)).toBe('member')
          expect(roles.get(nina.id)).toBe('owner')
        }
      }
    })

    it('answers 409 for the creator, whether removed by another owner or leaving', async () => {
      const ws = await team()
      expectStatus(await t.http('DELETE', member(ws, alice), { token: olivia.token }), 409, 'CONFLICT')
      expectStatus(await t.http('DELETE', member(ws, alice), { token: alice.token }), 409, 'CONFLICT')
      expect((await rolesOf(ws))[0]).toEqual([alice.id, 'owner'])
    })

    it('clears the primary workspace of a removed member whose primary it was', async () => {
      const ws = await team()
      await t.sql('update users set primary_workspace_id = (select id from workspaces where uuid = ?) where id = ?', [ws.uuid, mia.id])
      expect((await t.http('GET', '/api/v1/user', { token: mia.token })).body.data.primary_workspace.uuid).toBe(ws.uuid)
      expect((await t.http('DELETE', member(ws, mia), { token: alice.token })).status).toBe(204)
      expect((await t.http('GET', '/api/v1/user', { token: mia.token })).body.data.primary_workspace).toBeNull()
      const [row] = await t.sql('select primary_workspace_id from users where id = ?', [alice.id])
      expect(row.primary_workspace_id).not.toBeNull()
      await t.sql('update users set primary_workspace_id = (select id from workspaces where uuid = ?) where id = ?', [
        mia.workspaceUuid,
        mia.id,
      ])
    })

    it('answers 404 for a user who is not a member', async () => {
      const ws = await team()
      expectStatus(await t.http('DELETE', member(ws, nina), { token: alice.token }), 404, 'NOT_FOUND')
    })

    it("answers 404 for another tenant's workspace, saying nothing of it, and removes nobody", async () => {
      const ws = await team()
      for (const target of [mia, bob]) {
        const res = await t.http('DELETE', member(ws, target), { token: bob.token })
        expectStatus(res, 404, 'NOT_FOUND')
        expect(JSON.stringify(res.body)).not.toContain(ws.uuid)
      }
      expect(await rolesOf(ws)).toHaveLength(4)
    })

    it('answers 400 naming user_id or workspace_uuid when malformed, and 401 without a token', async () => {
      const ws = await team()
      expectInvalid(await t.http('DELETE', member(ws, 'me'), { token: alice.token }), 'user_id')
      expectInvalid(await t.http('DELETE', '/api/v1/workspaces/0123-abcd/members/1', { token: alice.token }), 'workspace_uuid')
      expectStatus(await t.http('DELETE', member(ws, mia)), 401, 'UNAUTHORIZED')
      expect(await rolesOf(ws)).toHaveLength(4)
    })
  })

  describe('with a workspace-bound application token', () => {
    it('manages members of the bound workspace only', async () => {
      const bound = await team()
      const other = await team()
      const created = await t.http('POST', '/api/v1/access-tokens', {
        token: alice.token,
        body: { name: 'bot', workspace_uuid: bound.uuid },
      })
      expect(created.status).toBe(201)
      const token: string = created.body.data.access_token
      expect((await t.http('GET', members(bound), { token })).status).toBe(200)
      expect((await t.http('GET', members(other), { token })).status).toBe(404)
      expect((await t.http('POST', members(other), { token, body: { user_id: nina.id } })).status).toBe(404)
      expect((await t.http('DELETE', member(other, mia), { token })).status).toBe(404)
      expect((await t.http('POST', members(bound), { token, body: { user_id: nina.id } })).status).toBe(201)
    })
  })

  describe('with a read-only application token', () => {
    it('lists members, but answers 403 to add, change and remove, and changes nothing', async () => {
      const ws = await team()
      const created = await t.http('POST', '/api/v1/access-tokens', { token: alice.token, body: { name: 'reader', abilities: ['read'] } })
      expect(created.status).toBe(201)
      const token: string = created.body.data.access_token
      const before = await rolesOf(ws)
      expect((await t.http('GET', members(ws), { token })).status).toBe(200)
      expectStatus(await t.http('POST', members(ws), { token, body: { user_id: nina.id } }), 403, 'FORBIDDEN')
      expectStatus(await t.http('PUT', member(ws, mia), { token, body: { role: 'admin' } }), 403, 'FORBIDDEN')
      expectStatus(await t.http('DELETE', member(ws, mia), { token }), 403, 'FORBIDDEN')
      expect(await rolesOf(ws)).toEqual(before)
    })
  })
})
