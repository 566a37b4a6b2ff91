/**
 * The authenticated user and the token of the request (docs/api/authentication.md): `GET /api/v1/user`
 * and `GET /api/v1/user/token`, with basic and application tokens.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { ACME_KEY, expectErrorBody, ISO, sha256, trpcError } from './helpers/expect.ts'

describe('the current user', () => {
  let t: TestApp
  let ada: TestUser
  beforeAll(async () => {
    t = await createTestApp()
    ada = await t.make.user({ name: 'Ada Lovelace', email: 'ada@example.com' })
  })
  afterAll(async () => t?.close())

  describe('user.me (GET /api/v1/user)', () => {
    it('answers the user with their primary workspace (shallow) for a basic token', async () => {
      const res = await t.http('GET', '/api/v1/user', { token: ada.token })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(Object.keys(res.body)).toEqual(['data'])
      const [user] = await t.sql('select id, created_at, updated_at from users where id = ?', [ada.id])
      const [workspace] = await t.sql('select uuid, slug from workspaces where uuid = ?', [ada.workspaceUuid])
      expect(res.body.data).toEqual({
        id: ada.id,
        name: 'Ada Lovelace',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@example.com',
        profile_photo_url: null,
        service_id: null,
        created_at: new Date(
          String(user.created_at)
            .replace(' ', 'T')
            .replace(/([+-]\d{2})$/, '$1:00'),
        ).toISOString(),
        updated_at: expect.stringMatching(ISO),
        primary_workspace: {
          uuid: ada.workspaceUuid,
          slug: workspace.slug,
          name: "Ada's Workspace",
          profile_photo_url: null,
          service_id: null,
          is_onboarded: false,
          metadata: {},
          is_owner: true,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
          user: null,
        },
      })
    })

    it('answers the same user through the caller as over REST', async () => {
      const viaCaller = await t.as(ada).user.me()
      const viaRest = await t.http('GET', '/api/v1/user', { token: ada.token })
      expect(viaCaller).toEqual(viaRest.body)
    })

    it('answers the owning user for an application token, read-only or bound to a workspace', async () => {
      const expected = (await t.as(ada).user.me()).data
      const full = await t.as(ada).accessTokens.create({ name: 'integration' })
      const readOnly = await t.as(ada).accessTokens.create({ name: 'reader', abilities: ['read'] })
      const bound = await t.as(ada).accessTokens.create({ name: 'bound', workspace_uuid: ada.workspaceUuid })
      for (const token of [full, readOnly, bound].map((created) => created.data.access_token)) {
        const res = await t.http('GET', '/api/v1/user', { token })
        expect(res.status).toBe(200)
        expect(res.body.data).toEqual(expected)
        expect((await t.as({ token }).user.me()).data).toEqual(expected)
      }
    })

    it('answers a user of a service scope with their service_id, given the key', async () => {
      const scoped = await t.make.user({ serviceKey: ACME_KEY })
      const res = await t.http('GET', '/api/v1/user', { token: scoped.token, headers: { 'x-service-authorization': ACME_KEY } })
      expect(res.status).toBe(200)
      expect(res.body.data.id).toBe(scoped.id)
      expect(res.body.data.service_id).toBe('acme')
      expect(res.body.data.primary_workspace.service_id).toBe('acme')
    })

    it('answers primary_workspace null once the primary workspace is deleted', async () => {
      const user = await t.make.user()
      await t.sql('update workspaces set deleted_at = now() where uuid = ?', [user.workspaceUuid])
      const me = await t.as(user).user.me()
      expect(me.data.id).toBe(user.id)
      expect(me.data.primary_workspace).toBeNull()
    })

    it('answers 401 without a token, with an unknown one and with a revoked one', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/user'), 401, 'UNAUTHORIZED', 'Missing bearer token')
      expectErrorBody(
        await t.http('GET', '/api/v1/user', { token: `wst_${'x'.repeat(43)}` }),
        401,
        'UNAUTHORIZED',
        'Invalid, expired or revoked token',
      )
      const user = await t.make.user()
      await t.as(user).auth.logout({})
      expectErrorBody(await t.http('GET', '/api/v1/user', { token: user.token }), 401, 'UNAUTHORIZED', 'Invalid, expired or revoked token')
      for (const call of [t.caller().user.me(), t.as(user).user.me()]) expect((await trpcError(call)).code).toBe('UNAUTHORIZED')
    })

    it('answers 401 for an expired application token', async () => {
      const created = await t.as(ada).accessTokens.create({ name: 'soon expired' })
      await t.sql("update access_tokens set expires_at = now() - interval '1 minute' where uuid = ?", [created.data.uuid])
      expectErrorBody(
        await t.http('GET', '/api/v1/user', { token: created.data.access_token }),
        401,
        'UNAUTHORIZED',
        'Invalid, expired or revoked token',
      )
    })
  })

  describe('user.token (GET /api/v1/user/token)', () => {
    it('reports a basic token: kind, name, abilities, no workspace and its 30-day expiry', async () => {
      const signIn = await t.caller().auth.signIn({ email: ada.email, password: ada.password })
      const token = signIn.data.access_token
      const res = await t.http('GET', '/api/v1/user/token', { token })
      expect(res.status).toBe(200)
      const [row] = await t.sql('select uuid from access_tokens where token_hash = ?', [sha256(token)])
      expect(res.body).toEqual({
        data: {
          uuid: row.uuid,
          kind: 'basic',
          name: 'sign-in',
          prefix: token.slice(0, 12),
          abilities: ['read', 'write'],
          workspace_uuid: null,
          expires_at: signIn.data.expires_at,
          last_used_at: null,
          created_at: expect.stringMatching(ISO),
        },
      })
      expect(res.body.data.prefix).toMatch(/^wst_/)
      expect(res.body.data).not.toHaveProperty('access_token')
      expect(JSON.stringify(res.body)).not.toContain(token)
    })

    it('reports an application token as created: kind, name, abilities, bound workspace and expiry', async () => {
      const created = await t.as(ada).accessTokens.create({
        name: 'CI pipeline',
        abilities: ['read'],
        workspace_uuid: ada.workspaceUuid,
        expires_at: '2099-06-30T12:00:00+02:00',
      })
      const res = await t.http('GET', '/api/v1/user/token', { token: created.data.access_token })
      expect(res.status).toBe(200)
      const { access_token: plaintext, ...view } = created.data
      expect(res.body.data).toEqual(view)
      expect(res.body.data).toEqual({
        uuid: created.data.uuid,
        kind: 'application',
        name: 'CI pipeline',
        prefix: plaintext.slice(0, 12),
        abilities: ['read'],
        workspace_uuid: ada.workspaceUuid,
        expires_at: '2099-06-30T10:00:00.000Z',
        last_used_at: null,
        created_at: created.data.created_at,
      })
      const viaCaller = await t.as({ token: plaintext }).user.token()
      expect(viaCaller.data).toMatchObject({
        uuid: created.data.uuid,
        kind: 'application',
        name: 'CI pipeline',
        workspace_uuid: ada.workspaceUuid,
      })
    })

    it('reports expires_at null for an application token without expiry', async () => {
      const created = await t.as(ada).accessTokens.create({ name: 'forever' })
      const res = await t.as({ token: created.data.access_token }).user.token()
      expect(res.data).toMatchObject({
        kind: 'application',
        name: 'forever',
        abilities: ['read', 'write'],
        workspace_uuid: null,
        expires_at: null,
      })
    })

    it('records last_used_at when a token is used', async () => {
      const created = await t.as(ada).accessTokens.create({ name: 'usage' })
      const before = Date.now()
      expect((await t.as({ token: created.data.access_token }).user.token()).data.last_used_at).toBeNull()
      await vi.waitFor(
        async () => {
          const [row] = await t.sql('select last_used_at from access_tokens where uuid = ?', [created.data.uuid])
          expect(row.last_used_at).not.toBeNull()
        },
        { timeout: 5000 },
      )
      const later = await t.as({ token: created.data.access_token }).user.token()
      expect(later.data.last_used_at).toMatch(ISO)
      expect(Date.parse(later.data.last_used_at ?? '')).toBeGreaterThanOrEqual(before - 1000)
      expect(Date.parse(later.data.last_used_at ?? '')).toBeLessThanOrEqual(Date.now() + 1000)
    })

    it('answers 401 without a token and for an expired one', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/user/token'), 401, 'UNAUTHORIZED', 'Missing bearer token')
      const user = await t.make.user()
      await t.sql("update access_tokens set expires_at = now() - interval '1 second' where token_hash = ?", [sha256(user.token)])
      expectErrorBody(
        await t.http('GET', '/api/v1/user/token', { token: user.token }),
        401,
        'UNAUTHORIZED',
        'Invalid, expired or revoked token',
      )
      expect((await trpcError(t.as(user).user.token())).code).toBe('UNAUTHORIZED')
    })
  })
})
