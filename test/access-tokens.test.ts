/**
 * Application access tokens (docs/api/authentication.md): `GET/POST/DELETE /api/v1/access-tokens[/{uuid}]`.
 * Named, optionally expiring, optionally bound to one workspace, optionally read-only; the
 * plaintext is shown once; managed only with a sign-in (basic) token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { ACME_KEY, expectErrorBody, expectIssues, ISO, issuePaths, sha256, trpcError, UUID } from './helpers/expect.ts'

const READ_ONLY_MESSAGE = 'This token is read-only'
const SESSION_MESSAGE = 'Application access tokens are managed with a sign-in (basic) token'

describe('application access tokens', () => {
  let t: TestApp
  let ada: TestUser
  let bob: TestUser
  beforeAll(async () => {
    t = await createTestApp()
    ada = await t.make.user({ name: 'Ada Lovelace' })
    bob = await t.make.user({ name: 'Bob Builder' })
  })
  afterAll(async () => t?.close())

  /** Live application tokens of a user, straight from the table. */
  const liveTokens = async (userId: number) =>
    Number(
      (
        await t.sql("select count(*)::int as n from access_tokens where user_id = ? and kind = 'application' and revoked_at is null", [
          userId,
        ])
      )[0].n,
    )

  describe('accessTokens.create (POST /api/v1/access-tokens)', () => {
    it('answers 201 with the token view and the wat_ plaintext, which then authenticates', async () => {
      const before = Date.now()
      const res = await t.http('POST', '/api/v1/access-tokens', { token: ada.token, body: { name: 'Zapier' } })
      expect(res.status).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const { data } = res.body
      expect(data).toEqual({
        uuid: expect.stringMatching(UUID),
        kind: 'application',
        name: 'Zapier',
        prefix: data.access_token.slice(0, 12),
        abilities: ['read', 'write'],
        workspace_uuid: null,
        expires_at: null,
        last_used_at: null,
        created_at: expect.stringMatching(ISO),
        access_token: expect.stringMatching(/^wat_[A-Za-z0-9_-]{43}$/),
      })
      expect(Date.parse(data.created_at)).toBeGreaterThanOrEqual(before - 1000)
      expect(Date.parse(data.created_at)).toBeLessThanOrEqual(Date.now() + 1000)
      const me = await t.http('GET', '/api/v1/user', { token: data.access_token })
      expect(me.status).toBe(200)
      expect(me.body.data.id).toBe(ada.id)
    })

    it('stores only the sha256 hex of the plaintext, with the owner, kind and service scope', async () => {
      const created = await t.as(ada).accessTokens.create({ name: 'hashed' })
      const plaintext = created.data.access_token
      const [row] = await t.sql(
        'select user_id, kind, name, token_hash, prefix, abilities, service_id, row_to_json(t)::text as whole from access_tokens t where uuid = ?',
        [created.data.uuid],
      )
      expect(row).toMatchObject({
        user_id: ada.id,
        kind: 'application',
        name: 'hashed',
        token_hash: sha256(plaintext),
        prefix: plaintext.slice(0, 12),
        abilities: ['read', 'write'],
        service_id: null,
      })
      expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/)
      expect(row.token_hash).not.toBe(plaintext)
      expect(row.whole).not.toContain(plaintext)
      expect(row.whole).not.toContain(plaintext.slice(4))
    })

    it('makes a different random token each time', async () => {
      const [first, second] = await Promise.all([
        t.as(ada).accessTokens.create({ name: 'same name' }),
        t.as(ada).accessTokens.create({ name: 'same name' }),
      ])
      expect(first.data.access_token).not.toBe(second.data.access_token)
      expect(first.data.uuid).not.toBe(second.data.uuid)
    })

    it('keeps an expiry in the future, normalised to UTC with a Z', async () => {
      const created = await t.as(ada).accessTokens.create({ name: 'expiring', expires_at: '2099-01-01T01:30:00+01:30' })
      expect(created.data.expires_at).toBe('2099-01-01T00:00:00.000Z')
      const [row] = await t.sql(
        "select to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as at from access_tokens where uuid = ?",
        [created.data.uuid],
      )
      expect(row.at).toBe('2099-01-01 00:00:00')
    })

    it('keeps abilities: read alone, write always with read, duplicates once', async () => {
      const cases: [('read' | 'write')[], string[]][] = [
        [['read'], ['read']],
        [['write'], ['read', 'write']],
        [
          ['read', 'write'],
          ['read', 'write'],
        ],
        [
          ['write', 'read'],
          ['write', 'read'],
        ],
        [['read', 'read'], ['read']],
      ]
      for (const [abilities, expected] of cases) {
        const created = await t.as(ada).accessTokens.create({ name: `abilities ${abilities.join('+')}`, abilities })
        expect(created.data.abilities).toEqual(expected)
        const [row] = await t.sql('select abilities from access_tokens where uuid = ?', [created.data.uuid])
        expect(row.abilities).toEqual(expected)
      }
    })

    it('binds a token to a workspace the caller is a member of', async () => {
      const res = await t.http('POST', '/api/v1/access-tokens', {
        token: ada.token,
        body: { name: 'bound', workspace_uuid: ada.workspaceUuid },
      })
      expect(res.status).toBe(201)
      expect(res.body.data.workspace_uuid).toBe(ada.workspaceUuid)
      const [row] = await t.sql('select w.uuid from access_tokens t join workspaces w on w.id = t.workspace_id where t.uuid = ?', [
        res.body.data.uuid,
      ])
      expect(row.uuid).toBe(ada.workspaceUuid)
    })

    it('scopes a bound token to its workspace: the workspace list shows only that one', async () => {
      const second = await t.as(ada).workspaces.create({ name: 'Second workspace' })
      const created = await t.as(ada).accessTokens.create({ name: 'only second', workspace_uuid: second.data.uuid })
      const all = await t.as(ada).workspaces.list({})
      expect(all.data.map((workspace) => workspace.uuid).sort()).toEqual([ada.workspaceUuid, second.data.uuid].sort())
      const scoped = await t.as({ token: created.data.access_token }).workspaces.list({})
      expect(scoped.data.map((workspace) => workspace.uuid)).toEqual([second.data.uuid])
    })

    it('answers 404 for a workspace the caller is not a member of, and for one that does not exist', async () => {
      const before = await liveTokens(ada.id)
      const foreign = await t.http('POST', '/api/v1/access-tokens', {
        token: ada.token,
        body: { name: 'sneaky', workspace_uuid: bob.workspaceUuid },
      })
      expectErrorBody(foreign, 404, 'NOT_FOUND', 'Workspace not found')
      const missing = await t.http('POST', '/api/v1/access-tokens', {
        token: ada.token,
        body: { name: 'missing', workspace_uuid: '01890000-0000-7000-8000-000000000000' },
      })
      expectErrorBody(missing, 404, 'NOT_FOUND', 'Workspace not found')
      expect(foreign.body.message).toBe(missing.body.message)
      const error = await trpcError(t.as(ada).accessTokens.create({ name: 'sneaky', workspace_uuid: bob.workspaceUuid }))
      expect(error.code).toBe('NOT_FOUND')
      expect(await liveTokens(ada.id)).toBe(before)
    })

    it('answers 400 naming expires_at for an expiry in the past, and creates nothing', async () => {
      const before = await liveTokens(ada.id)
      const past = new Date(Date.now() - 60_000).toISOString()
      const res = await t.http('POST', '/api/v1/access-tokens', { token: ada.token, body: { name: 'stale', expires_at: past } })
      expectIssues(res, [['expires_at']])
      expect(res.body.issues[0]).toEqual({ code: 'custom', path: ['expires_at'], message: 'must be in the future' })
      const error = await trpcError(t.as(ada).accessTokens.create({ name: 'stale', expires_at: past }))
      expect(issuePaths(error)).toEqual([['expires_at']])
      expect(await liveTokens(ada.id)).toBe(before)
    })

    const invalid: [string, Record<string, unknown>, (string | number)[]][] = [
      ['a missing name', {}, ['name']],
      ['an empty name', { name: '' }, ['name']],
      ['a name over 255 characters', { name: 'n'.repeat(256) }, ['name']],
      ['a name that is a number', { name: 7 }, ['name']],
      ['an expires_at that is not a date-time', { name: 'x', expires_at: 'next tuesday' }, ['expires_at']],
      ['an expires_at that is a date without time', { name: 'x', expires_at: '2099-01-01' }, ['expires_at']],
      ['an expires_at that is an impossible date', { name: 'x', expires_at: '2099-02-30T00:00:00Z' }, ['expires_at']],
      ['an expires_at that is a number', { name: 'x', expires_at: 4102444800 }, ['expires_at']],
      ['a workspace_uuid that is not a uuid', { name: 'x', workspace_uuid: 'primary' }, ['workspace_uuid']],
      ['empty abilities', { name: 'x', abilities: [] }, ['abilities']],
      ['an unknown ability', { name: 'x', abilities: ['admin'] }, ['abilities', 0]],
      ['more than two abilities', { name: 'x', abilities: ['read', 'write', 'read'] }, ['abilities']],
      ['abilities that are a string', { name: 'x', abilities: 'read' }, ['abilities']],
    ]
    it.each(invalid)('answers 400 for %s, naming the field (REST and caller)', async (_rule, body, path) => {
      const res = await t.http('POST', '/api/v1/access-tokens', { token: ada.token, body })
      expectIssues(res, [path])
      const error = await trpcError(t.as(ada).accessTokens.create(body as never))
      expect(issuePaths(error)).toEqual([path])
    })

    it('answers 400 for an unknown field', async () => {
      const res = await t.http('POST', '/api/v1/access-tokens', { token: ada.token, body: { name: 'x', scopes: ['*'] } })
      expectErrorBody(res, 400, 'BAD_REQUEST', 'Input validation failed')
      expect(res.body.issues).toHaveLength(1)
      expect(res.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['scopes'], path: [] })
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('POST', '/api/v1/access-tokens', { body: { name: 'x' } }), 401, 'UNAUTHORIZED', 'Missing bearer token')
      expect((await trpcError(t.caller().accessTokens.create({ name: 'x' }))).code).toBe('UNAUTHORIZED')
    })

    it('answers 403 for a read-only application token, creating nothing', async () => {
      const reader = await t.as(ada).accessTokens.create({ name: 'reader', abilities: ['read'] })
      const before = await liveTokens(ada.id)
      const res = await t.http('POST', '/api/v1/access-tokens', { token: reader.data.access_token, body: { name: 'escalate' } })
      expectErrorBody(res, 403, 'FORBIDDEN', READ_ONLY_MESSAGE)
      const error = await trpcError(t.as({ token: reader.data.access_token }).accessTokens.create({ name: 'escalate' }))
      expect(error.code).toBe('FORBIDDEN')
      expect(error.message).toBe(READ_ONLY_MESSAGE)
      expect(await liveTokens(ada.id)).toBe(before)
    })

    it('answers 403 for an application token with write ability: tokens are managed with a sign-in token', async () => {
      const writer = await t.as(ada).accessTokens.create({ name: 'writer' })
      const before = await liveTokens(ada.id)
      const res = await t.http('POST', '/api/v1/access-tokens', { token: writer.data.access_token, body: { name: 'minted' } })
      expectErrorBody(res, 403, 'FORBIDDEN', SESSION_MESSAGE)
      const error = await trpcError(t.as({ token: writer.data.access_token }).accessTokens.create({ name: 'minted' }))
      expect(error.code).toBe('FORBIDDEN')
      expect(error.message).toBe(SESSION_MESSAGE)
      expect(await liveTokens(ada.id)).toBe(before)
    })

    it('gives a token made under a service key that service_id; it works only with that key', async () => {
      const scoped = await t.make.user({ serviceKey: ACME_KEY })
      const created = await t.as(scoped, { 'x-service-authorization': ACME_KEY }).accessTokens.create({ name: 'acme integration' })
      const [row] = await t.sql('select service_id from access_tokens where uuid = ?', [created.data.uuid])
      expect(row.service_id).toBe('acme')
      const ok = await t.http('GET', '/api/v1/user', { token: created.data.access_token, headers: { 'x-service-authorization': ACME_KEY } })
      expect(ok.status).toBe(200)
      expect(ok.body.data.id).toBe(scoped.id)
      expectErrorBody(await t.http('GET', '/api/v1/user', { token: created.data.access_token }), 401, 'UNAUTHORIZED')
    })
  })

  describe('read-only application tokens on other mutations', () => {
    it('answers 403 on POST /api/v1/workspaces and creates no workspace, while reads work', async () => {
      const reader = await t.as(ada).accessTokens.create({ name: 'reader', abilities: ['read'] })
      const [{ n: before }] = await t.sql('select count(*)::int as n from workspaces where user_id = ?', [ada.id])
      const res = await t.http('POST', '/api/v1/workspaces', { token: reader.data.access_token, body: { name: 'Not allowed' } })
      expectErrorBody(res, 403, 'FORBIDDEN', READ_ONLY_MESSAGE)
      const error = await trpcError(t.as({ token: reader.data.access_token }).workspaces.create({ name: 'Not allowed' }))
      expect(error.code).toBe('FORBIDDEN')
      expect(await t.sql('select count(*)::int as n from workspaces where user_id = ?', [ada.id])).toEqual([{ n: before }])
      const list = await t.http('GET', '/api/v1/workspaces', { token: reader.data.access_token })
      expect(list.status).toBe(200)
      expect(list.body.data.map((workspace: { uuid: string }) => workspace.uuid)).toContain(ada.workspaceUuid)
    })

    it('lets an application token with write ability create a workspace', async () => {
      const writer = await t.as(ada).accessTokens.create({ name: 'writer' })
      const res = await t.http('POST', '/api/v1/workspaces', { token: writer.data.access_token, body: { name: 'Made by integration' } })
      expect(res.status).toBe(201)
      expect(res.body.data.name).toBe('Made by integration')
    })
  })

  describe('accessTokens.list (GET /api/v1/access-tokens)', () => {
    let carol: TestUser
    let created: Awaited<ReturnType<ReturnType<TestApp['as']>['accessTokens']['create']>>[]
    beforeAll(async () => {
      carol = await t.make.user({ name: 'Carol' })
      created = []
      for (const name of ['one', 'two', 'three', 'four', 'five']) created.push(await t.as(carol).accessTokens.create({ name }))
      await t.as(bob).accessTokens.create({ name: 'bob only' })
    })

    it("lists the caller's live application tokens, newest first, never with the plaintext", async () => {
      const res = await t.http('GET', '/api/v1/access-tokens', { token: carol.token })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'meta'])
      const views = created.map(({ data: { access_token: _plaintext, ...view } }) => view).reverse()
      expect(res.body.data).toEqual(views)
      for (const item of res.body.data) expect(item).not.toHaveProperty('access_token')
      const text = JSON.stringify(res.body)
      for (const token of created) expect(text).not.toContain(token.data.access_token)
      expect(text).not.toContain(carol.token)
      expect(res.body.data.map((item: { kind: string }) => item.kind)).toEqual([
        'application',
        'application',
        'application',
        'application',
        'application',
      ])
    })

    it('answers the paginator shape with links and meta (default per_page 15)', async () => {
      const path = `${t.config.appUrl}/api/v1/access-tokens`
      const res = await t.http('GET', '/api/v1/access-tokens', { token: carol.token })
      expect(res.body.links).toEqual({
        first: `${path}?page=1&per_page=15`,
        last: `${path}?page=1&per_page=15`,
        prev: null,
        next: null,
      })
      expect(res.body.meta).toEqual({ current_page: 1, from: 1, last_page: 1, path, per_page: 15, to: 5, total: 5 })
    })

    it('pages with page and per_page', async () => {
      const path = `${t.config.appUrl}/api/v1/access-tokens`
      const res = await t.http('GET', '/api/v1/access-tokens?page=2&per_page=2', { token: carol.token })
      expect(res.status).toBe(200)
      expect(res.body.data.map((item: { name: string }) => item.name)).toEqual(['three', 'two'])
      expect(res.body.links).toEqual({
        first: `${path}?page=1&per_page=2`,
        last: `${path}?page=3&per_page=2`,
        prev: `${path}?page=1&per_page=2`,
        next: `${path}?page=3&per_page=2`,
      })
      expect(res.body.meta).toEqual({ current_page: 2, from: 3, last_page: 3, path, per_page: 2, to: 4, total: 5 })
      const last = await t.as(carol).accessTokens.list({ page: 3, per_page: 2 })
      expect(last.data.map((item) => item.name)).toEqual(['one'])
      expect(last.meta).toEqual({ current_page: 3, from: 5, last_page: 3, path, per_page: 2, to: 5, total: 5 })
      expect(last.links.next).toBeNull()
    })

    it('answers an empty page past the end', async () => {
      const path = `${t.config.appUrl}/api/v1/access-tokens`
      const res = await t.as(carol).accessTokens.list({ page: 9, per_page: 2 })
      expect(res.data).toEqual([])
      expect(res.meta).toEqual({ current_page: 9, from: null, last_page: 3, path, per_page: 2, to: null, total: 5 })
      expect(res.links.prev).toBe(`${path}?page=3&per_page=2`)
      expect(res.links.next).toBeNull()
    })

    it('answers an empty list for a user without application tokens (basic tokens are not listed)', async () => {
      const dave = await t.make.user()
      await t.caller().auth.signIn({ email: dave.email, password: dave.password })
      const res = await t.http('GET', '/api/v1/access-tokens', { token: dave.token })
      expect(res.status).toBe(200)
      expect(res.body.data).toEqual([])
      expect(res.body.meta).toMatchObject({ current_page: 1, from: null, last_page: 1, to: null, total: 0 })
      expect(res.body.links).toMatchObject({ prev: null, next: null })
    })

    const invalid: [string, string, string][] = [
      ['page 0', 'page=0', 'page'],
      ['a page that is not a number', 'page=abc', 'page'],
      ['per_page 0', 'per_page=0', 'per_page'],
      ['per_page over 100', 'per_page=101', 'per_page'],
      ['a fractional per_page', 'per_page=1.5', 'per_page'],
    ]
    it.each(invalid)('answers 400 for %s, naming the parameter', async (_rule, query, field) => {
      const res = await t.http('GET', `/api/v1/access-tokens?${query}`, { token: carol.token })
      expectIssues(res, [[field]])
    })

    it('answers BAD_REQUEST naming per_page through the caller', async () => {
      const error = await trpcError(t.as(carol).accessTokens.list({ per_page: 101 }))
      expect(issuePaths(error)).toEqual([['per_page']])
    })

    it('answers 400 for an unknown query parameter', async () => {
      const res = await t.http('GET', '/api/v1/access-tokens?kind=basic', { token: carol.token })
      expectErrorBody(res, 400, 'BAD_REQUEST', 'Input validation failed')
      expect(res.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['kind'] })
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/access-tokens'), 401, 'UNAUTHORIZED', 'Missing bearer token')
      expect((await trpcError(t.caller().accessTokens.list({}))).code).toBe('UNAUTHORIZED')
    })
  })

  describe('accessTokens.delete (DELETE /api/v1/access-tokens/{token_uuid})', () => {
    it('answers 204 with an empty body; the token then gives 401 and leaves the list', async () => {
      const created = await t.as(ada).accessTokens.create({ name: 'to revoke' })
      const keep = await t.as(ada).accessTokens.create({ name: 'to keep' })
      const res = await t.http('DELETE', `/api/v1/access-tokens/${created.data.uuid}`, { token: ada.token })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expectErrorBody(
        await t.http('GET', '/api/v1/user', { token: created.data.access_token }),
        401,
        'UNAUTHORIZED',
        'Invalid, expired or revoked token',
      )
      expect((await trpcError(t.as({ token: created.data.access_token }).user.me())).code).toBe('UNAUTHORIZED')
      expect((await t.http('GET', '/api/v1/user', { token: keep.data.access_token })).status).toBe(200)
      const list = await t.as(ada).accessTokens.list({ per_page: 100 })
      const uuids = list.data.map((item) => item.uuid)
      expect(uuids).not.toContain(created.data.uuid)
      expect(uuids).toContain(keep.data.uuid)
      const [row] = await t.sql('select revoked_at is not null as revoked from access_tokens where uuid = ?', [created.data.uuid])
      expect(row.revoked).toBe(true)
    })

    it('revokes through the caller and answers 404 the second time', async () => {
      const created = await t.as(ada).accessTokens.create({ name: 'twice' })
      await expect(t.as(ada).accessTokens.delete({ token_uuid: created.data.uuid })).resolves.toBeUndefined()
      const error = await trpcError(t.as(ada).accessTokens.delete({ token_uuid: created.data.uuid }))
      expect(error.code).toBe('NOT_FOUND')
      expectErrorBody(
        await t.http('DELETE', `/api/v1/access-tokens/${created.data.uuid}`, { token: ada.token }),
        404,
        'NOT_FOUND',
        'Access token not found',
      )
    })

    it("answers 404 for another user's token, which stays usable", async () => {
      const bobs = await t.as(bob).accessTokens.create({ name: 'bob integration' })
      const res = await t.http('DELETE', `/api/v1/access-tokens/${bobs.data.uuid}`, { token: ada.token })
      expectErrorBody(res, 404, 'NOT_FOUND', 'Access token not found')
      expect((await trpcError(t.as(ada).accessTokens.delete({ token_uuid: bobs.data.uuid }))).code).toBe('NOT_FOUND')
      const me = await t.http('GET', '/api/v1/user', { token: bobs.data.access_token })
      expect(me.status).toBe(200)
      expect(me.body.data.id).toBe(bob.id)
      const [row] = await t.sql('select revoked_at from access_tokens where uuid = ?', [bobs.data.uuid])
      expect(row.revoked_at).toBeNull()
    })

    it('answers 404 for the uuid of a basic token, which stays usable (logout revokes those)', async () => {
      const [row] = await t.sql('select uuid from access_tokens where token_hash = ?', [sha256(ada.token)])
      const res = await t.http('DELETE', `/api/v1/access-tokens/${row.uuid}`, { token: ada.token })
      expectErrorBody(res, 404, 'NOT_FOUND', 'Access token not found')
      expect((await t.http('GET', '/api/v1/user', { token: ada.token })).status).toBe(200)
    })

    it('answers 404 for a uuid that does not exist', async () => {
      const res = await t.http('DELETE', '/api/v1/access-tokens/01890000-0000-7000-8000-000000000000', { token: ada.token })
      expectErrorBody(res, 404, 'NOT_FOUND', 'Access token not found')
    })

    it('answers 400 naming token_uuid for a malformed uuid', async () => {
      expectIssues(await t.http('DELETE', '/api/v1/access-tokens/0123-abcd', { token: ada.token }), [['token_uuid']])
      expect(issuePaths(await trpcError(t.as(ada).accessTokens.delete({ token_uuid: 'not-a-uuid' })))).toEqual([['token_uuid']])
    })

    it('answers 401 without a token, leaving the token alive', async () => {
      const created = await t.as(ada).accessTokens.create({ name: 'anonymous delete' })
      expectErrorBody(await t.http('DELETE', `/api/v1/access-tokens/${created.data.uuid}`), 401, 'UNAUTHORIZED', 'Missing bearer token')
      expect((await t.http('GET', '/api/v1/user', { token: created.data.access_token })).status).toBe(200)
    })

    it('answers 403 for application tokens (read-only or not), even deleting themselves', async () => {
      const target = await t.as(ada).accessTokens.create({ name: 'target' })
      const reader = await t.as(ada).accessTokens.create({ name: 'reader', abilities: ['read'] })
      const writer = await t.as(ada).accessTokens.create({ name: 'writer' })
      expectErrorBody(
        await t.http('DELETE', `/api/v1/access-tokens/${target.data.uuid}`, { token: reader.data.access_token }),
        403,
        'FORBIDDEN',
        READ_ONLY_MESSAGE,
      )
      expectErrorBody(
        await t.http('DELETE', `/api/v1/access-tokens/${target.data.uuid}`, { token: writer.data.access_token }),
        403,
        'FORBIDDEN',
        SESSION_MESSAGE,
      )
      expectErrorBody(
        await t.http('DELETE', `/api/v1/access-tokens/${writer.data.uuid}`, { token: writer.data.access_token }),
        403,
        'FORBIDDEN',
        SESSION_MESSAGE,
      )
      expect((await trpcError(t.as({ token: writer.data.access_token }).accessTokens.delete({ token_uuid: target.data.uuid }))).code).toBe(
        'FORBIDDEN',
      )
      for (const token of [target, reader, writer])
        expect((await t.http('GET', '/api/v1/user', { token: token.data.access_token })).status).toBe(200)
    })
  })

  describe('expiry of application tokens', () => {
    it('answers 401 once expires_at has passed (REST and caller), and the list still shows the expiry', async () => {
      const created = await t
        .as(ada)
        .accessTokens.create({ name: 'short lived', expires_at: new Date(Date.now() + 3_600_000).toISOString() })
      expect((await t.http('GET', '/api/v1/user', { token: created.data.access_token })).status).toBe(200)
      await t.sql("update access_tokens set expires_at = now() - interval '1 second' where uuid = ?", [created.data.uuid])
      expectErrorBody(
        await t.http('GET', '/api/v1/user', { token: created.data.access_token }),
        401,
        'UNAUTHORIZED',
        'Invalid, expired or revoked token',
      )
      expect((await trpcError(t.as({ token: created.data.access_token }).user.token())).code).toBe('UNAUTHORIZED')
      const [row] = await t.sql('select expires_at from access_tokens where uuid = ?', [created.data.uuid])
      const list = await t.as(ada).accessTokens.list({ per_page: 100 })
      const listed = list.data.find((item) => item.uuid === created.data.uuid)
      expect(listed?.expires_at).toMatch(ISO)
      expect(Date.parse(listed?.expires_at ?? '')).toBeLessThan(Date.now())
      expect(row.expires_at).not.toBeNull()
    })
  })
})
