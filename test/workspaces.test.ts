/**
 * Workspaces over REST (routers/workspaces.router.ts, src/tenancy/workspaces.service.ts):
 * list, create, retrieve, update, delete; shapes of the specification's "Workspace", tenancy
 * and roles of docs/api/tenancy.md, the paginator and `with` of docs/api/conventions.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type HttpResult, type TestApp, type TestUser } from './helpers/app.ts'
import { dottedIssuePaths, expectInvalid, hiddenCheck, ISO_Z, USER_KEYS, UUID, WORKSPACE_KEYS } from './helpers/expect.ts'

/** A 404 that says nothing of the hidden workspace. */
const expectHidden = hiddenCheck('Workspace')

describe('workspaces', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  const http = (...args: Parameters<TestApp['http']>) => t.http(...args)

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Liddell' })
    bob = await t.make.user({ name: 'Bob Builder' })
    carol = await t.make.user({ name: 'Carol Member' })
    dave = await t.make.user({ name: 'Dave Admin' })
  })
  afterAll(async () => t?.close())

  /** A workspace of alice's with carol as `member` and dave as `admin`. */
  async function teamWorkspace(input: Parameters<TestApp['make']['workspace']>[1] = {}) {
    const workspace = await t.make.workspace(alice, input)
    await t.make.member(workspace, alice, carol, 'member')
    await t.make.member(workspace, alice, dave, 'admin')
    return workspace
  }

  describe('workspaces.create (POST /api/v1/workspaces)', () => {
    it('answers 201 with the exact Workspace shape, every metadata field kept, the creator nested shallow', async () => {
      const metadata = {
        onboarding_step: 3,
        sources: ['google', 'friend'],
        affiliate_name: 'Partner Co',
        role: 'cto',
        industry: 'software',
        tools: ['slack', 'notion'],
        ai_tools: {
          agents: [{ emoji: '🤖', name: 'Support bot', description: 'Answers tickets' }],
          prompts: [{ emoji: '✍️', name: 'Summariser', description: 'Summarises text' }],
          workflows: [{ emoji: '⚙️', name: 'Triage', description: 'Routes issues' }],
        },
        favourite_colour: 'teal',
        'utm.source': 'newsletter',
      }
      const res = await http('POST', '/api/v1/workspaces', {
        token: alice.token,
        body: { name: 'Acme Research', slug: 'acme-research', is_onboarded: true, profile_photo_key: 'photos/acme logo.png', metadata },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const ws = res.body.data
      expect(Object.keys(ws).sort()).toEqual(WORKSPACE_KEYS)
      expect(ws.uuid).toMatch(UUID)
      expect(ws).toMatchObject({
        slug: 'acme-research',
        name: 'Acme Research',
        profile_photo_url: `${t.config.appUrl}/api/v1/media/photos%2Facme%20logo.png`,
        service_id: null,
        is_onboarded: true,
        is_owner: true,
      })
      expect(ws.metadata).toEqual(metadata)
      expect(ws.created_at).toMatch(ISO_Z)
      expect(ws.updated_at).toMatch(ISO_Z)
      expect(Object.keys(ws.user).sort()).toEqual(USER_KEYS)
      expect(ws.user).toMatchObject({
        id: alice.id,
        name: 'Alice Liddell',
        first_name: 'Alice',
        last_name: 'Liddell',
        email: alice.email,
        profile_photo_url: null,
        service_id: null,
        primary_workspace: null,
      })
      expect(ws.user.created_at).toMatch(ISO_Z)
      expect(ws.user.updated_at).toMatch(ISO_Z)

      const again = await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })
      expect(again.status).toBe(200)
      expect(again.body.data).toEqual(ws)
    })

    it('defaults: slug from the name, not onboarded, empty metadata, no photo; a taken derived slug gets a suffix', async () => {
      const first = await http('POST', '/api/v1/workspaces', { token: alice.token, body: { name: 'Crème Brûlée Lab!' } })
      expect(first.status).toBe(201)
      expect(first.body.data).toMatchObject({
        slug: 'creme-brulee-lab',
        name: 'Crème Brûlée Lab!',
        is_onboarded: false,
        metadata: {},
        profile_photo_url: null,
        is_owner: true,
      })
      const second = await http('POST', '/api/v1/workspaces', { token: bob.token, body: { name: 'Creme brulee lab' } })
      expect(second.status).toBe(201)
      expect(second.body.data.slug).toMatch(/^creme-brulee-lab-[0-9a-f]{6}$/)
    })

    it('makes the creator the only member, as owner', async () => {
      const ws = await t.make.workspace(bob, { name: 'Solo' })
      const members = await http('GET', `/api/v1/workspaces/${ws.uuid}/members`, { token: bob.token })
      expect(members.status).toBe(200)
      expect(members.body.data.map((m: { user: { id: number }; role: string }) => [m.user.id, m.role])).toEqual([[bob.id, 'owner']])
    })

    it('answers the same through the tRPC caller', async () => {
      const created = await t.as(alice).workspaces.create({ name: 'Via Caller', metadata: { onboarding_step: 0 } })
      expect(created.data).toMatchObject({ name: 'Via Caller', slug: 'via-caller', is_owner: true, metadata: { onboarding_step: 0 } })
      expect(created.data.user?.primary_workspace).toBeNull()
    })

    it.each([
      ['a missing name', {}, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a name that is not a string', { name: 42 }, 'name'],
      ['a name with a NUL character', { name: 'bad\u0000name' }, 'name'],
      ['a slug with upper case and spaces', { name: 'Ok', slug: 'Bad Slug' }, 'slug'],
      ['a slug with a double hyphen', { name: 'Ok', slug: 'a--b' }, 'slug'],
      ['a slug ending in a hyphen', { name: 'Ok', slug: 'abc-' }, 'slug'],
      ['a slug over 80 characters', { name: 'Ok', slug: 'a'.repeat(81) }, 'slug'],
      ['is_onboarded as the string "true"', { name: 'Ok', is_onboarded: 'true' }, 'is_onboarded'],
      ['metadata.onboarding_step as the string "3"', { name: 'Ok', metadata: { onboarding_step: '3' } }, 'metadata.onboarding_step'],
      ['metadata.onboarding_step not an integer', { name: 'Ok', metadata: { onboarding_step: 2.5 } }, 'metadata.onboarding_step'],
      ['metadata.onboarding_step negative', { name: 'Ok', metadata: { onboarding_step: -1 } }, 'metadata.onboarding_step'],
      ['metadata.sources not an array', { name: 'Ok', metadata: { sources: 'google' } }, 'metadata.sources'],
      ['metadata.tools holding a number', { name: 'Ok', metadata: { tools: ['slack', 7] } }, 'metadata.tools.1'],
      ['metadata.role not a string', { name: 'Ok', metadata: { role: 1 } }, 'metadata.role'],
      [
        'metadata.ai_tools.workflows item without an emoji',
        { name: 'Ok', metadata: { ai_tools: { workflows: [{ name: 'x', description: 'y' }] } } },
        'metadata.ai_tools.workflows.0.emoji',
      ],
      [
        'metadata.ai_tools item with an unknown key',
        { name: 'Ok', metadata: { ai_tools: { agents: [{ emoji: 'a', name: 'b', description: 'c', extra: 'd' }] } } },
        'metadata.ai_tools.agents.0',
      ],
      ['metadata.ai_tools with an unknown list', { name: 'Ok', metadata: { ai_tools: { memories: [] } } }, 'metadata.ai_tools'],
      ['an extra metadata key with a number value', { name: 'Ok', metadata: { extra: 5 } }, 'metadata.extra'],
      ['an extra metadata key with an object value', { name: 'Ok', metadata: { extra: { a: 'b' } } }, 'metadata.extra'],
      ['an extra metadata key with a bad name', { name: 'Ok', metadata: { 'bad key!': 'x' } }, 'metadata.bad key!'],
      ['metadata that is not an object', { name: 'Ok', metadata: 'x' }, 'metadata'],
      [
        'metadata with more than 100 keys',
        { name: 'Ok', metadata: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v'])) },
        'metadata',
      ],
      ['an extra metadata value over 10,000 characters', { name: 'Ok', metadata: { note: 'x'.repeat(10_001) } }, 'metadata.note'],
      ['a profile_photo_key over 512 characters', { name: 'Ok', profile_photo_key: 'k'.repeat(513) }, 'profile_photo_key'],
    ])('answers 400 naming the field for %s', async (_label, body, path) => {
      const res = await http('POST', '/api/v1/workspaces', { token: alice.token, body })
      expectInvalid(res, path)
    })

    it('answers 400 for an unknown top-level field, naming it, and creates nothing', async () => {
      const res = await http('POST', '/api/v1/workspaces', { token: alice.token, body: { name: 'Sneaky', user_id: bob.id } })
      expect(res.status).toBe(400)
      expect(res.body.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['user_id'], path: [] })])
      const rows = await t.sql('select 1 from workspaces where name = ?', ['Sneaky'])
      expect(rows).toHaveLength(0)
    })

    it('answers 400 naming slug when the slug is taken, even by another tenant', async () => {
      const bobs = await t.make.workspace(bob, { name: 'Taken', slug: 'taken-slug' })
      const res = await http('POST', '/api/v1/workspaces', { token: alice.token, body: { name: 'Mine', slug: 'taken-slug' } })
      expectInvalid(res, 'slug')
      expect(res.body.issues).toEqual([{ code: 'custom', path: ['slug'], message: 'The slug has already been taken' }])
      expect(JSON.stringify(res.body)).not.toContain(bobs.uuid)
    })

    it('the tRPC surface names the field of a service check too (slug taken)', async () => {
      await t.make.workspace(bob, { name: 'Trpc Holder', slug: 'trpc-held' })
      const res = await http('POST', '/trpc/workspaces.create', { token: alice.token, body: { name: 'Mine', slug: 'trpc-held' } })
      expect(res.status).toBe(400)
      expect(res.body.error.data).toMatchObject({
        code: 'BAD_REQUEST',
        issues: [{ code: 'custom', path: ['slug'], message: 'The slug has already been taken' }],
      })
      await expect(t.as(alice).workspaces.create({ name: 'Mine', slug: 'trpc-held' })).rejects.toMatchObject({
        code: 'BAD_REQUEST',
        cause: { issues: [{ path: ['slug'] }] },
      })
    })

    it('answers 401 without a token, and with an unknown one', async () => {
      const none = await http('POST', '/api/v1/workspaces', { body: { name: 'Nope' } })
      expect(none.status).toBe(401)
      expect(none.body.code).toBe('UNAUTHORIZED')
      const unknown = await http('POST', '/api/v1/workspaces', { token: 'x'.repeat(40), body: { name: 'Nope' } })
      expect(unknown.status).toBe(401)
    })

    it('records the service scope of X-Service-Authorization as service_id', async () => {
      const scoped = await t.make.user({ serviceKey: 'acme-service-key-0123456789' })
      const res = await http('POST', '/api/v1/workspaces', {
        token: scoped.token,
        headers: { 'x-service-authorization': 'acme-service-key-0123456789' },
        body: { name: 'Scoped' },
      })
      expect(res.status).toBe(201)
      expect(res.body.data.service_id).toBe('acme')
      expect(res.body.data.user.service_id).toBe('acme')
    })
  })

  describe('workspaces.retrieve (GET /api/v1/workspaces/{workspace_uuid})', () => {
    it('answers the workspace with its owner embedded; is_owner is true only for the creator', async () => {
      const ws = await teamWorkspace({ name: 'Retrieve Me' })
      const asOwner = await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })
      expect(asOwner.status).toBe(200)
      expect(Object.keys(asOwner.body.data).sort()).toEqual(WORKSPACE_KEYS)
      expect(asOwner.body.data).toMatchObject({
        uuid: ws.uuid,
        name: 'Retrieve Me',
        is_owner: true,
        user: { id: alice.id, primary_workspace: null },
      })

      for (const viewer of [carol, dave]) {
        const res = await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: viewer.token })
        expect(res.status).toBe(200)
        expect(res.body.data).toMatchObject({ uuid: ws.uuid, is_owner: false, user: { id: alice.id, primary_workspace: null } })
      }
    })

    it("answers 404 for another tenant's workspace, saying nothing of it", async () => {
      const ws = await t.make.workspace(alice, { name: 'Private Plans', slug: 'private-plans' })
      expectHidden(await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: bob.token }), ws)
      await expect(t.as(bob).workspaces.retrieve({ workspace_uuid: ws.uuid })).rejects.toMatchObject({ code: 'NOT_FOUND' })
    })

    it('answers 404 for a uuid that does not exist', async () => {
      const res = await http('GET', '/api/v1/workspaces/0192f0c1-7c1e-7a4b-9f00-000000000000', { token: alice.token })
      expect(res.status).toBe(404)
    })

    it('answers 400 naming workspace_uuid for a malformed uuid', async () => {
      expectInvalid(await http('GET', '/api/v1/workspaces/0123-abcd', { token: alice.token }), 'workspace_uuid')
    })

    it('answers 401 without a token', async () => {
      const res = await http('GET', `/api/v1/workspaces/${alice.workspaceUuid}`)
      expect(res.status).toBe(401)
      expect(res.body.code).toBe('UNAUTHORIZED')
    })
  })

  describe('workspaces.update (PUT /api/v1/workspaces/{workspace_uuid})', () => {
    it('lets the owner change every field; omitted fields are kept; timestamps stay UTC', async () => {
      const ws = await t.make.workspace(alice, { name: 'Before', slug: 'before-slug', metadata: { role: 'ceo' } })
      const res = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, {
        token: alice.token,
        body: { name: 'After', slug: 'after-slug', is_onboarded: true, profile_photo_key: 'after.png' },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body.data).sort()).toEqual(WORKSPACE_KEYS)
      expect(res.body.data).toMatchObject({
        uuid: ws.uuid,
        name: 'After',
        slug: 'after-slug',
        is_onboarded: true,
        profile_photo_url: `${t.config.appUrl}/api/v1/media/after.png`,
        metadata: { role: 'ceo' },
        is_owner: true,
        created_at: ws.created_at,
        user: { id: alice.id, primary_workspace: null },
      })
      expect(res.body.data.updated_at).toMatch(ISO_Z)
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(ws.updated_at))

      const onlyName = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token, body: { name: 'Renamed' } })
      expect(onlyName.body.data).toMatchObject({ name: 'Renamed', slug: 'after-slug', is_onboarded: true, metadata: { role: 'ceo' } })
      expect(onlyName.body.data.profile_photo_url).toBe(`${t.config.appUrl}/api/v1/media/after.png`)

      const empty = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token, body: {} })
      expect(empty.status).toBe(200)
      expect(empty.body.data).toMatchObject({ name: 'Renamed', slug: 'after-slug', is_onboarded: true, metadata: { role: 'ceo' } })
    })

    it('clears profile_photo_key with null, and keeps its own slug', async () => {
      const ws = await t.make.workspace(alice, { name: 'Photo', slug: 'photo-ws', profile_photo_key: 'p.png' })
      const res = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, {
        token: alice.token,
        body: { profile_photo_key: null, slug: 'photo-ws' },
      })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ profile_photo_url: null, slug: 'photo-ws' })
    })

    it('merges metadata key by key; null removes a key; extra string keys are kept', async () => {
      const ws = await t.make.workspace(alice, {
        name: 'Meta',
        metadata: { onboarding_step: 1, role: 'cto', industry: 'retail', sources: ['ads'], ref: 'a' },
      })
      const res = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, {
        token: alice.token,
        body: { metadata: { onboarding_step: 2, industry: null, ref: null, new_key: 'b', tools: ['jira'], ai_tools: { prompts: [] } } },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.metadata).toEqual({
        onboarding_step: 2,
        role: 'cto',
        sources: ['ads'],
        new_key: 'b',
        tools: ['jira'],
        ai_tools: { prompts: [] },
      })

      const again = await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })
      expect(again.body.data.metadata).toEqual(res.body.data.metadata)
      const [row] = await t.sql('select metadata from workspaces where uuid = ?', [ws.uuid])
      const stored = typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata
      expect(stored).toEqual(res.body.data.metadata)
    })

    it('keeps every key of concurrent updates of different metadata keys (the row is locked)', async () => {
      const ws = await t.make.workspace(alice, { name: 'Concurrent Meta', metadata: { role: 'cto' } })
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`)
      // Callers, not HTTP: every update starts in the same tick, so their statements interleave.
      await Promise.all(keys.map((key) => t.as(alice).workspaces.update({ workspace_uuid: ws.uuid, metadata: { [key]: key } })))
      const [row] = await t.sql('select metadata from workspaces where uuid = ?', [ws.uuid])
      const stored = typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata
      expect(stored).toEqual({ role: 'cto', ...Object.fromEntries(keys.map((key) => [key, key])) })
    })

    it('answers 400 naming metadata when the merge would pass 100 keys, and keeps the stored metadata', async () => {
      const keys = (from: number, count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${from + i}`, 'v']))
      const ws = await t.make.workspace(alice, { name: 'Many Keys', metadata: keys(0, 60) })
      expectInvalid(
        await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token, body: { metadata: keys(60, 41) } }),
        'metadata',
      )
      expect((await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })).body.data).toEqual(ws)
      const upTo100 = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, {
        token: alice.token,
        body: { metadata: { ...keys(60, 41), k0: null } },
      })
      expect(upTo100.status).toBe(200)
      expect(Object.keys(upTo100.body.data.metadata)).toHaveLength(100)
    })

    it('lets an admin update (is_owner stays false for them)', async () => {
      const ws = await teamWorkspace({ name: 'Admin Edits' })
      const res = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: dave.token, body: { name: 'Edited By Admin' } })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ name: 'Edited By Admin', is_owner: false, user: { id: alice.id } })
    })

    it('answers 403 to a plain member and changes nothing', async () => {
      const ws = await teamWorkspace({ name: 'Read Only For Carol' })
      const res = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: carol.token, body: { name: 'Hijacked' } })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('FORBIDDEN')
      const after = await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })
      expect(after.body.data).toEqual(ws)
      expect(after.body.data.name).toBe('Read Only For Carol')
    })

    it("answers 404 for another tenant's workspace, saying nothing of it, and leaves it unchanged", async () => {
      const ws = await t.make.workspace(alice, { name: 'Not Yours', slug: 'not-yours', metadata: { role: 'x' } })
      const res = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, {
        token: bob.token,
        body: { name: 'Pwned', metadata: { role: null } },
      })
      expectHidden(res, ws)
      const after = await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })
      expect(after.body.data).toEqual(ws)
    })

    it.each([
      ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a null name', { name: null }, 'name'],
      ['a bad slug format', { slug: '-Nope-' }, 'slug'],
      ['is_onboarded as a number', { is_onboarded: 1 }, 'is_onboarded'],
      ['metadata.onboarding_step as the string "3"', { metadata: { onboarding_step: '3' } }, 'metadata.onboarding_step'],
      ['an extra metadata key with a boolean value', { metadata: { extra: true } }, 'metadata.extra'],
      ['an extra metadata key with an array value', { metadata: { extra: ['a'] } }, 'metadata.extra'],
      ['metadata.sources holding a number', { metadata: { sources: [1] } }, 'metadata.sources.0'],
    ])('answers 400 naming the field for %s, and changes nothing', async (_label, body, path) => {
      const ws = await t.make.workspace(alice, { name: 'Stable', metadata: { onboarding_step: 1 } })
      expectInvalid(await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token, body }), path)
      const after = await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })
      expect(after.body.data).toEqual(ws)
    })

    it('answers 400 for an unknown top-level field', async () => {
      const ws = await t.make.workspace(alice, { name: 'Strict' })
      const res = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token, body: { name: 'X', owner_id: bob.id } })
      expect(res.status).toBe(400)
      expect(res.body.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['owner_id'] })])
    })

    it('a workspace_uuid in the body cannot redirect the update: the path wins', async () => {
      const target = await t.make.workspace(alice, { name: 'Path Target' })
      const other = await t.make.workspace(alice, { name: 'Body Target' })
      const res = await http('PUT', `/api/v1/workspaces/${target.uuid}`, {
        token: alice.token,
        body: { workspace_uuid: other.uuid, name: 'Changed' },
      })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ uuid: target.uuid, name: 'Changed' })
      expect((await http('GET', `/api/v1/workspaces/${other.uuid}`, { token: alice.token })).body.data).toEqual(other)
    })

    it('answers 400 naming slug when another workspace has it', async () => {
      await t.make.workspace(bob, { name: 'Holder', slug: 'held-slug' })
      const ws = await t.make.workspace(alice, { name: 'Wants It' })
      expectInvalid(await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token, body: { slug: 'held-slug' } }), 'slug')
    })

    it('answers 400 naming workspace_uuid for a malformed uuid, and 401 without a token', async () => {
      expectInvalid(await http('PUT', '/api/v1/workspaces/1234', { token: alice.token, body: { name: 'x' } }), 'workspace_uuid')
      const res = await http('PUT', `/api/v1/workspaces/${alice.workspaceUuid}`, { body: { name: 'x' } })
      expect(res.status).toBe(401)
    })
  })

  describe('workspaces.delete (DELETE /api/v1/workspaces/{workspace_uuid})', () => {
    it('lets the owner delete (204, empty body); then it is 404 for everyone and gone from lists', async () => {
      const ws = await teamWorkspace({ name: 'Doomed' })
      const res = await http('DELETE', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      for (const viewer of [alice, carol, dave]) {
        expect((await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: viewer.token })).status).toBe(404)
        const list = await http('GET', '/api/v1/workspaces?per_page=100', { token: viewer.token })
        expect(list.body.data.map((w: { uuid: string }) => w.uuid)).not.toContain(ws.uuid)
      }
      expect((await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token, body: { name: 'Zombie' } })).status).toBe(404)
      expect((await http('DELETE', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })).status).toBe(404)
      expect((await http('GET', `/api/v1/workspaces/${ws.uuid}/members`, { token: alice.token })).status).toBe(404)
    })

    it("answers 409 for the caller's primary workspace and keeps it", async () => {
      const res = await http('DELETE', `/api/v1/workspaces/${alice.workspaceUuid}`, { token: alice.token })
      expect(res.status).toBe(409)
      expect(res.body.code).toBe('CONFLICT')
      expect((await http('GET', `/api/v1/workspaces/${alice.workspaceUuid}`, { token: alice.token })).status).toBe(200)
    })

    it('answers 403 to an admin and to a plain member, and the workspace stays', async () => {
      const ws = await teamWorkspace({ name: 'Protected' })
      for (const viewer of [dave, carol]) {
        const res = await http('DELETE', `/api/v1/workspaces/${ws.uuid}`, { token: viewer.token })
        expect(res.status).toBe(403)
        expect(res.body.code).toBe('FORBIDDEN')
      }
      expect((await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })).body.data).toEqual(ws)
    })

    it("answers 404 for another tenant's workspace, saying nothing of it, and leaves it", async () => {
      const ws = await t.make.workspace(alice, { name: 'Keep Out', slug: 'keep-out' })
      expectHidden(await http('DELETE', `/api/v1/workspaces/${ws.uuid}`, { token: bob.token }), ws)
      expect((await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })).body.data).toEqual(ws)
    })

    it('clears the primary workspace of a member whose primary it was', async () => {
      const ws = await teamWorkspace({ name: 'Carol Primary' })
      await t.sql('update users set primary_workspace_id = (select id from workspaces where uuid = ?) where id = ?', [ws.uuid, carol.id])
      expect((await http('GET', '/api/v1/user', { token: carol.token })).body.data.primary_workspace.uuid).toBe(ws.uuid)
      expect((await http('DELETE', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })).status).toBe(204)
      expect((await http('GET', '/api/v1/user', { token: carol.token })).body.data.primary_workspace).toBeNull()
      await t.sql('update users set primary_workspace_id = (select id from workspaces where uuid = ?) where id = ?', [
        carol.workspaceUuid,
        carol.id,
      ])
    })

    it('answers 400 naming workspace_uuid for a malformed uuid, and 401 without a token', async () => {
      expectInvalid(await http('DELETE', '/api/v1/workspaces/0123-abcd', { token: alice.token }), 'workspace_uuid')
      expect((await http('DELETE', `/api/v1/workspaces/${alice.workspaceUuid}`)).status).toBe(401)
    })
  })

  describe('workspaces.list (GET /api/v1/workspaces)', () => {
    let erin: TestUser
    const names = ['Zeta Works', 'alpha lab', 'Mid Point', '100% Growth']
    beforeAll(async () => {
      erin = await t.make.user({ name: 'Erin Lister' })
      for (const name of names) await t.make.workspace(erin, { name })
    })
    const list = (query = '', user: { token: string } = erin) => http('GET', `/api/v1/workspaces${query}`, { token: user.token })
    const namesOf = (res: HttpResult) => res.body.data.map((w: { name: string }) => w.name)

    it('answers the paginator shape, newest first by default, items without user', async () => {
      const res = await list()
      expect(res.status).toBe(200)
      expect(Object.keys(res.body)).toEqual(['data', 'links', 'meta'])
      const path = `${t.config.appUrl}/api/v1/workspaces`
      expect(res.body.meta).toEqual({ current_page: 1, from: 1, last_page: 1, path, per_page: 15, to: 5, total: 5 })
      expect(res.body.links).toEqual({
        first: `${path}?sort=-created_at&page=1&per_page=15`,
        last: `${path}?sort=-created_at&page=1&per_page=15`,
        prev: null,
        next: null,
      })
      expect(namesOf(res)).toEqual(['100% Growth', 'Mid Point', 'alpha lab', 'Zeta Works', "Erin's Workspace"])
      for (const item of res.body.data) {
        expect(Object.keys(item).sort()).toEqual(WORKSPACE_KEYS)
        expect(item.user).toBeNull()
        expect(item.is_owner).toBe(true)
        expect(item.created_at).toMatch(ISO_Z)
      }
    })

    it('pages with per_page, with links to the neighbours', async () => {
      const path = `${t.config.appUrl}/api/v1/workspaces`
      const first = await list('?per_page=2&sort=name')
      expect(first.body.meta).toEqual({ current_page: 1, from: 1, last_page: 3, path, per_page: 2, to: 2, total: 5 })
      expect(first.body.links).toEqual({
        first: `${path}?sort=name&page=1&per_page=2`,
        last: `${path}?sort=name&page=3&per_page=2`,
        prev: null,
        next: `${path}?sort=name&page=2&per_page=2`,
      })
      const third = await list('?per_page=2&sort=name&page=3')
      expect(third.body.meta).toMatchObject({ current_page: 3, from: 5, to: 5, total: 5 })
      expect(third.body.links).toMatchObject({ prev: `${path}?sort=name&page=2&per_page=2`, next: null })
      expect(third.body.data).toHaveLength(1)
      const beyond = await list('?per_page=2&page=9')
      expect(beyond.status).toBe(200)
      expect(beyond.body.data).toEqual([])
      expect(beyond.body.meta).toMatchObject({ current_page: 9, from: null, to: null, last_page: 3, total: 5 })
    })

    it('sorts by name, case-insensitively, both ways', async () => {
      const asc = ['100% Growth', 'alpha lab', "Erin's Workspace", 'Mid Point', 'Zeta Works']
      expect(namesOf(await list('?sort=name'))).toEqual(asc)
      expect(namesOf(await list('?sort=-name'))).toEqual([...asc].reverse())
      expect(namesOf(await list('?sort=created_at'))).toEqual(["Erin's Workspace", ...names])
    })

    it('searches name and slug case-insensitively, with % and _ taken literally', async () => {
      expect(namesOf(await list('?search=ALPHA'))).toEqual(['alpha lab'])
      expect(namesOf(await list('?search=zeta-works'))).toEqual(['Zeta Works'])
      const percent = await list('?search=%25')
      expect(namesOf(percent)).toEqual(['100% Growth'])
      expect(percent.body.meta.total).toBe(1)
      expect(percent.body.links.first).toContain('search=%25')
      expect((await list('?search=_')).body.meta.total).toBe(0)
      expect((await list('?search=nothing-like-this')).body).toMatchObject({
        data: [],
        meta: { total: 0, from: null, to: null, last_page: 1 },
      })
    })

    it('embeds the owner, shallow, with with=user', async () => {
      const res = await list('?with=user&sort=name')
      expect(res.status).toBe(200)
      for (const item of res.body.data) {
        expect(Object.keys(item.user).sort()).toEqual(USER_KEYS)
        expect(item.user).toMatchObject({ id: erin.id, email: erin.email, primary_workspace: null })
      }
      expect(res.body.links.first).toContain('with=user')
    })

    it('lists the workspaces the caller is a member of, never another tenant’s', async () => {
      const ws = await teamWorkspace({ name: 'Shared Team' })
      const asCarol = await list('?per_page=100&with=user', carol)
      const item = asCarol.body.data.find((w: { uuid: string }) => w.uuid === ws.uuid)
      expect(item).toMatchObject({ name: 'Shared Team', is_owner: false, user: { id: alice.id } })
      const own = asCarol.body.data.find((w: { uuid: string }) => w.uuid === carol.workspaceUuid)
      expect(own).toMatchObject({ is_owner: true })

      const asErin = await list('?per_page=100')
      expect(asErin.body.data.map((w: { uuid: string }) => w.uuid)).not.toContain(ws.uuid)
      expect(JSON.stringify(asErin.body)).not.toContain('Shared Team')
    })

    it.each([
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['per_page=abc', 'per_page'],
      ['page=0', 'page'],
      ['sort=email', 'sort'],
      ['with=owner', 'with'],
      ['with=user,tools', 'with'],
      [`search=${'s'.repeat(256)}`, 'search'],
      ['unknown_filter=1', ''],
    ])('answers 400 naming the parameter for %s', async (query, path) => {
      const res = await list(`?${query}`)
      expect(res.status).toBe(400)
      expect(dottedIssuePaths(res).some((p) => p === path || p.startsWith(`${path}.`))).toBe(true)
    })

    it('accepts the per_page bounds 1 and 100', async () => {
      expect((await list('?per_page=1')).body.meta).toMatchObject({ per_page: 1, last_page: 5, to: 1 })
      expect((await list('?per_page=100')).body.meta).toMatchObject({ per_page: 100, last_page: 1, to: 5 })
    })

    it('answers 401 without a token', async () => {
      const res = await http('GET', '/api/v1/workspaces')
      expect(res.status).toBe(401)
      expect(res.body.code).toBe('UNAUTHORIZED')
    })
  })

  describe('workspace-bound and read-only application tokens', () => {
    async function appToken(user: TestUser, body: Record<string, unknown>): Promise<string> {
      const res = await http('POST', '/api/v1/access-tokens', { token: user.token, body: { name: 'integration', ...body } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      return res.body.data.access_token
    }

    it('a token bound to one workspace lists only it and gets 404 on the others', async () => {
      const ws = await t.make.workspace(alice, { name: 'Bound Target' })
      const token = await appToken(alice, { workspace_uuid: ws.uuid })
      const list = await http('GET', '/api/v1/workspaces?per_page=100', { token })
      expect(list.status).toBe(200)
      expect(list.body.meta.total).toBe(1)
      expect(list.body.data.map((w: { uuid: string }) => w.uuid)).toEqual([ws.uuid])

      expect((await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token })).status).toBe(200)
      const other = await http('GET', `/api/v1/workspaces/${alice.workspaceUuid}`, { token })
      expect(other.status).toBe(404)
      expect(JSON.stringify(other.body)).not.toContain(alice.workspaceUuid)
      const update = await http('PUT', `/api/v1/workspaces/${alice.workspaceUuid}`, { token, body: { name: 'Via bound token' } })
      expect(update.status).toBe(404)
      expect((await http('GET', `/api/v1/workspaces/${alice.workspaceUuid}/members`, { token })).status).toBe(404)
      const renamed = await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token, body: { name: 'Bound Renamed' } })
      expect(renamed.status).toBe(200)
      expect(renamed.body.data.name).toBe('Bound Renamed')
    })

    it('a read-only token may list but not create, update or delete (403)', async () => {
      const ws = await t.make.workspace(alice, { name: 'Read Only Target' })
      const token = await appToken(alice, { abilities: ['read'] })
      expect((await http('GET', '/api/v1/workspaces', { token })).status).toBe(200)
      expect((await http('POST', '/api/v1/workspaces', { token, body: { name: 'No' } })).status).toBe(403)
      expect((await http('PUT', `/api/v1/workspaces/${ws.uuid}`, { token, body: { name: 'No' } })).status).toBe(403)
      expect((await http('DELETE', `/api/v1/workspaces/${ws.uuid}`, { token })).status).toBe(403)
      expect((await http('GET', `/api/v1/workspaces/${ws.uuid}`, { token: alice.token })).body.data).toEqual(ws)
    })
  })
})
