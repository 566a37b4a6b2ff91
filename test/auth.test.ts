/**
 * Authentication (docs/api/authentication.md): sign-up, sign-in, logout, bearer tokens, service scopes
 * and sign-in rate limits, through the caller (behaviour) and over HTTP (paths, statuses, bodies).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { ACME_KEY, expectErrorBody, expectIssues, GLOBEX_KEY, issuePaths, sha256, trpcError } from './helpers/expect.ts'

const DAY_MS = 86_400_000
const PASSWORD = 'correct horse battery'

/** Asserts an instant is `days` days from now, within the time the request took. */
function expectDaysAhead(iso: string, days: number, before: number): void {
  expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  const at = Date.parse(iso)
  expect(at).toBeGreaterThanOrEqual(before + days * DAY_MS)
  expect(at).toBeLessThanOrEqual(Date.now() + days * DAY_MS)
}

describe('authentication', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(async () => t?.close())

  describe('auth.signUp (POST /api/v1/auth/sign-up)', () => {
    it('answers 201 with a wst_ Bearer token that expires in 30 days and the user with their primary workspace', async () => {
      const before = Date.now()
      const res = await t.http('POST', '/api/v1/auth/sign-up', {
        body: { name: 'Ada Lovelace', email: 'ada@example.com', password: PASSWORD },
      })
      expect(res.status).toBe(201)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(Object.keys(res.body)).toEqual(['data'])
      const { data } = res.body
      expect(Object.keys(data).sort()).toEqual(['access_token', 'expires_at', 'token_type', 'user'])
      expect(data.token_type).toBe('Bearer')
      expect(data.access_token).toMatch(/^wst_[A-Za-z0-9_-]{43}$/)
      expectDaysAhead(data.expires_at, 30, before)
      const [row] = await t.sql('select id, created_at from users where email = ?', ['ada@example.com'])
      const [workspace] = await t.sql('select uuid, slug, created_at, updated_at from workspaces where user_id = ?', [row.id])
      expect(data.user).toEqual({
        id: Number(row.id),
        name: 'Ada Lovelace',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@example.com',
        profile_photo_url: null,
        service_id: null,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
        primary_workspace: {
          uuid: workspace.uuid,
          slug: workspace.slug,
          name: "Ada's Workspace",
          profile_photo_url: null,
          service_id: null,
          is_onboarded: false,
          metadata: {},
          is_owner: true,
          created_at: expect.stringMatching(/Z$/),
          updated_at: expect.stringMatching(/Z$/),
          user: null,
        },
      })
      const me = await t.http('GET', '/api/v1/user', { token: data.access_token })
      expect(me.status).toBe(200)
      expect(me.body.data.id).toBe(data.user.id)
    })

    it('creates the user, a primary workspace they own and their owner membership', async () => {
      const res = await t.caller().auth.signUp({ name: 'Grace Hopper', email: 'grace@example.com', password: PASSWORD })
      const userId = res.data.user.id
      const [user] = await t.sql('select email, name, primary_workspace_id::float8 as pw, service_id from users where id = ?', [userId])
      const workspaces = await t.sql(
        'select id::float8 as id, uuid, name, user_id, service_id, deleted_at from workspaces where user_id = ?',
        [userId],
      )
      expect(workspaces).toHaveLength(1)
      expect(workspaces[0]).toMatchObject({
        uuid: res.data.user.primary_workspace?.uuid,
        name: "Grace's Workspace",
        user_id: userId,
        service_id: null,
        deleted_at: null,
      })
      expect(user).toEqual({ email: 'grace@example.com', name: 'Grace Hopper', pw: workspaces[0].id, service_id: null })
      const members = await t.sql('select workspace_id::float8 as workspace_id, user_id, role from workspace_members where user_id = ?', [
        userId,
      ])
      expect(members).toEqual([{ workspace_id: workspaces[0].id, user_id: userId, role: 'owner' }])
      const tokens = await t.sql('select kind, name, abilities, workspace_id, revoked_at from access_tokens where user_id = ?', [userId])
      expect(tokens).toEqual([{ kind: 'basic', name: 'sign-in', abilities: ['read', 'write'], workspace_id: null, revoked_at: null }])
    })

    it('stores the e-mail lower-cased and splits the name unless first_name/last_name are given', async () => {
      const split = await t.caller().auth.signUp({ name: 'Alan Mathison Turing', email: 'Alan.Turing@Example.COM', password: PASSWORD })
      expect(split.data.user).toMatchObject({ email: 'alan.turing@example.com', first_name: 'Alan', last_name: 'Mathison Turing' })
      const single = await t.caller().auth.signUp({ name: 'Plato', email: 'plato@example.com', password: PASSWORD })
      expect(single.data.user).toMatchObject({ name: 'Plato', first_name: 'Plato', last_name: '' })
      const given = await t.caller().auth.signUp({
        name: 'Kurt G',
        email: 'kurt@example.com',
        password: PASSWORD,
        first_name: 'Kurt',
        last_name: 'Gödel',
      })
      expect(given.data.user).toMatchObject({ name: 'Kurt G', first_name: 'Kurt', last_name: 'Gödel' })
      expect(given.data.user.primary_workspace?.name).toBe("Kurt's Workspace")
    })

    it('answers 400 naming email for an e-mail already taken, in any letter case, and creates no second user', async () => {
      await t.make.user({ email: 'taken@example.com' })
      const res = await t.http('POST', '/api/v1/auth/sign-up', { body: { name: 'Copy', email: 'TAKEN@Example.com', password: PASSWORD } })
      expectIssues(res, [['email']])
      expect(res.body.issues[0]).toEqual({ code: 'custom', path: ['email'], message: 'The email has already been taken' })
      const error = await trpcError(t.caller().auth.signUp({ name: 'Copy', email: 'taken@example.com', password: PASSWORD }))
      expect(issuePaths(error)).toEqual([['email']])
      const [{ n }] = await t.sql('select count(*)::int as n from users where email = ?', ['taken@example.com'])
      expect(n).toBe(1)
    })

    const invalid: [string, Record<string, unknown>, (string | number)[]][] = [
      ['a missing name', { email: 'v1@example.com', password: PASSWORD }, ['name']],
      ['an empty name', { name: '', email: 'v2@example.com', password: PASSWORD }, ['name']],
      ['a name over 255 characters', { name: 'n'.repeat(256), email: 'v3@example.com', password: PASSWORD }, ['name']],
      ['a name holding a NUL character', { name: 'a\u0000b', email: 'v4@example.com', password: PASSWORD }, ['name']],
      ['a missing email', { name: 'V', password: PASSWORD }, ['email']],
      ['an email that is not an address', { name: 'V', email: 'not-an-email', password: PASSWORD }, ['email']],
      ['an email that is a number', { name: 'V', email: 42, password: PASSWORD }, ['email']],
      [
        'an email over 320 characters',
        { name: 'V', email: `${'a'.repeat(64)}@${'b'.repeat(250)}.${'c'.repeat(10)}`, password: PASSWORD },
        ['email'],
      ],
      ['a missing password', { name: 'V', email: 'v5@example.com' }, ['password']],
      ['a password under 8 characters', { name: 'V', email: 'v6@example.com', password: '1234567' }, ['password']],
      ['a password over 256 characters', { name: 'V', email: 'v7@example.com', password: 'p'.repeat(257) }, ['password']],
      [
        'a first_name over 255 characters',
        { name: 'V', email: 'v8@example.com', password: PASSWORD, first_name: 'f'.repeat(256) },
        ['first_name'],
      ],
    ]
    it.each(invalid)('answers 400 for %s, naming the field (REST and caller)', async (_rule, body, path) => {
      const res = await t.http('POST', '/api/v1/auth/sign-up', { body })
      expectIssues(res, [path])
      const error = await trpcError(t.caller().auth.signUp(body as never))
      expect(issuePaths(error)).toEqual([path])
    })

    it('says a short or long password in words a form can show', async () => {
      const short = await t.http('POST', '/api/v1/auth/sign-up', { body: { name: 'V', email: 'words@example.com', password: '1234567' } })
      expect(short.body.issues).toMatchObject([{ path: ['password'], message: 'Must be at least 8 characters' }])
      const long = await t.http('POST', '/api/v1/auth/sign-up', { body: { name: 'V', email: 'words@example.com', password: 'p'.repeat(257) } })
      expect(long.body.issues).toMatchObject([{ path: ['password'], message: 'Must be at most 256 characters' }])
    })

    it('answers 400 for an unknown field and creates no user', async () => {
      const res = await t.http('POST', '/api/v1/auth/sign-up', {
        body: { name: 'V', email: 'unknown-field@example.com', password: PASSWORD, is_admin: true },
      })
      expectErrorBody(res, 400, 'BAD_REQUEST', 'Input validation failed')
      expect(res.body.issues).toHaveLength(1)
      expect(res.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['is_admin'], path: [] })
      const [{ n }] = await t.sql('select count(*)::int as n from users where email = ?', ['unknown-field@example.com'])
      expect(n).toBe(0)
    })

    it('answers 400 for malformed JSON and 415 for a body that is not JSON', async () => {
      const malformed = await t.http('POST', '/api/v1/auth/sign-up', {
        rawBody: '{"name":',
        headers: { 'content-type': 'application/json' },
      })
      expectErrorBody(malformed, 400, 'BAD_REQUEST', 'Malformed JSON in request body')
      const form = await t.http('POST', '/api/v1/auth/sign-up', {
        rawBody: 'name=a&email=b',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      expectErrorBody(form, 415, 'UNSUPPORTED_MEDIA_TYPE')
    })

    it('answers 405 with Allow: POST for GET on the sign-up path', async () => {
      const res = await t.http('GET', '/api/v1/auth/sign-up')
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('POST')
      expect(res.body.code).toBe('METHOD_NOT_SUPPORTED')
      expect(res.body.request_id).toBe(res.headers.get('x-request-id'))
    })
  })

  describe('auth.signIn (POST /api/v1/auth/sign-in)', () => {
    it('answers 200 with a new wst_ token, 30 days of life and the user; both tokens then work', async () => {
      const ada = await t.make.user({ name: 'Ada Signin' })
      const before = Date.now()
      const res = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: ada.email, password: ada.password } })
      expect(res.status).toBe(200)
      const { data } = res.body
      expect(Object.keys(data).sort()).toEqual(['access_token', 'expires_at', 'token_type', 'user'])
      expect(data.token_type).toBe('Bearer')
      expect(data.access_token).toMatch(/^wst_[A-Za-z0-9_-]{43}$/)
      expect(data.access_token).not.toBe(ada.token)
      expectDaysAhead(data.expires_at, 30, before)
      expect(data.user).toMatchObject({ id: ada.id, email: ada.email, name: 'Ada Signin', first_name: 'Ada', last_name: 'Signin' })
      expect(data.user.primary_workspace.uuid).toBe(ada.workspaceUuid)
      for (const token of [ada.token, data.access_token]) {
        const me = await t.http('GET', '/api/v1/user', { token })
        expect(me.status).toBe(200)
        expect(me.body.data.id).toBe(ada.id)
      }
      const [{ n }] = await t.sql(
        "select count(*)::int as n from access_tokens where user_id = ? and kind = 'basic' and revoked_at is null",
        [ada.id],
      )
      expect(n).toBe(2)
    })

    it('accepts the e-mail in any letter case', async () => {
      const user = await t.make.user({ email: 'mixed.case@example.com' })
      const res = await t.caller().auth.signIn({ email: 'Mixed.Case@EXAMPLE.com', password: user.password })
      expect(res.data.user.id).toBe(user.id)
      expect(res.data.user.email).toBe('mixed.case@example.com')
    })

    it('answers 401 without revealing whether the e-mail exists', async () => {
      const user = await t.make.user()
      const tokensBefore = await t.sql('select count(*)::int as n from access_tokens')
      const wrongPassword = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: 'wrong password' } })
      const unknownEmail = await t.http('POST', '/api/v1/auth/sign-in', {
        body: { email: 'nobody@example.com', password: 'wrong password' },
      })
      for (const res of [wrongPassword, unknownEmail]) expectErrorBody(res, 401, 'UNAUTHORIZED', 'Invalid credentials')
      const { request_id: firstId, ...first } = wrongPassword.body
      const { request_id: secondId, ...second } = unknownEmail.body
      expect(first).toEqual(second)
      expect(firstId).not.toBe(secondId)
      expect(wrongPassword.headers.get('retry-after')).toBeNull()
      const viaCaller = await Promise.all([
        trpcError(t.caller().auth.signIn({ email: user.email, password: 'wrong password' })),
        trpcError(t.caller().auth.signIn({ email: 'nobody@example.com', password: 'wrong password' })),
      ])
      for (const error of viaCaller) {
        expect(error.code).toBe('UNAUTHORIZED')
        expect(error.message).toBe('Invalid credentials')
      }
      expect(await t.sql('select count(*)::int as n from access_tokens')).toEqual(tokensBefore)
    })

    it('answers 401 for a correct password of a user in another service scope', async () => {
      const scoped = await t.make.user({ serviceKey: ACME_KEY })
      const error = await trpcError(t.caller().auth.signIn({ email: scoped.email, password: scoped.password }))
      expect(error.code).toBe('UNAUTHORIZED')
      const ok = await t.caller({ 'x-service-authorization': ACME_KEY }).auth.signIn({ email: scoped.email, password: scoped.password })
      expect(ok.data.user.id).toBe(scoped.id)
    })

    const invalid: [string, Record<string, unknown>, (string | number)[]][] = [
      ['a missing email', { password: 'x' }, ['email']],
      ['an email that is not an address', { email: 'nope', password: 'x' }, ['email']],
      ['a missing password', { email: 'a@example.com' }, ['password']],
      ['an empty password', { email: 'a@example.com', password: '' }, ['password']],
      ['a password over 256 characters', { email: 'a@example.com', password: 'p'.repeat(257) }, ['password']],
      ['a password that is a number', { email: 'a@example.com', password: 12345678 }, ['password']],
    ]
    it.each(invalid)('answers 400 for %s, naming the field (REST and caller)', async (_rule, body, path) => {
      const res = await t.http('POST', '/api/v1/auth/sign-in', { body })
      expectIssues(res, [path])
      const error = await trpcError(t.caller().auth.signIn(body as never))
      expect(issuePaths(error)).toEqual([path])
    })

    it('answers 400 for an unknown field', async () => {
      const res = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: 'a@example.com', password: 'x', remember: true } })
      expectErrorBody(res, 400, 'BAD_REQUEST', 'Input validation failed')
      expect(res.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['remember'] })
    })
  })

  describe('token storage', () => {
    it('stores basic tokens only as their sha256 hex, with a 12-character prefix', async () => {
      const user = await t.make.user()
      const signIn = await t.caller().auth.signIn({ email: user.email, password: user.password })
      const plaintexts = [user.token, signIn.data.access_token]
      const rows = await t.sql(
        'select token_hash, prefix, row_to_json(t)::text as whole from access_tokens t where user_id = ? order by id',
        [user.id],
      )
      expect(rows).toHaveLength(2)
      rows.forEach((row, index) => {
        const plaintext = plaintexts[index]
        expect(row.token_hash).toBe(sha256(plaintext))
        expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/)
        expect(row.token_hash).not.toBe(plaintext)
        expect(row.prefix).toBe(plaintext.slice(0, 12))
        expect(row.whole).not.toContain(plaintext)
        expect(row.whole).not.toContain(plaintext.slice(4))
      })
      const columns = await t.sql(
        "select column_name from information_schema.columns where table_name = 'access_tokens' order by column_name",
      )
      expect(columns.map((column) => column.column_name)).toEqual([
        'abilities',
        'created_at',
        'expires_at',
        'id',
        'kind',
        'last_used_at',
        'name',
        'prefix',
        'revoked_at',
        'service_id',
        'token_hash',
        'updated_at',
        'user_id',
        'uuid',
        'workspace_id',
      ])
    })

    it('never stores the password in plain text (argon2id)', async () => {
      const user = await t.make.user({ password: 'a very secret passphrase' })
      const [row] = await t.sql('select password_hash from users where id = ?', [user.id])
      expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
      expect(row.password_hash).not.toContain('a very secret passphrase')
    })
  })

  describe('bearer authentication (Authorization: Bearer <token>)', () => {
    it('answers 401 UNAUTHORIZED without a token', async () => {
      const res = await t.http('GET', '/api/v1/user')
      expectErrorBody(res, 401, 'UNAUTHORIZED', 'Missing bearer token')
      const error = await trpcError(t.caller().user.me())
      expect(error.code).toBe('UNAUTHORIZED')
      expect(error.message).toBe('Missing bearer token')
    })

    const malformed: [string, string][] = [
      ['another scheme', 'Basic dXNlcjpwYXNz'],
      ['a scheme without a token', 'Bearer'],
      ['a token that is too short', 'Bearer wst_short'],
      ['a token with characters no token has', 'Bearer wst_abc.def/ghi+jkl=mnopqrs'],
      ['two tokens', 'Bearer wst_aaaaaaaaaaaaaaaaaaaa wst_bbbbbbbbbbbbbbbbbbbbb'],
    ]
    it.each(malformed)('answers 401 for a malformed header: %s', async (_rule, authorization) => {
      const res = await t.http('GET', '/api/v1/user', { headers: { authorization } })
      expectErrorBody(res, 401, 'UNAUTHORIZED', 'Invalid bearer token')
      const error = await trpcError(t.caller({ authorization }).user.me())
      expect(error.code).toBe('UNAUTHORIZED')
    })

    it('answers 401 for a well-formed token nobody was issued', async () => {
      const res = await t.http('GET', '/api/v1/user', { token: `wst_${'A'.repeat(43)}` })
      expectErrorBody(res, 401, 'UNAUTHORIZED', 'Invalid, expired or revoked token')
      const error = await trpcError(t.as({ token: `wat_${'B'.repeat(43)}` }).user.me())
      expect(error.code).toBe('UNAUTHORIZED')
      expect(error.message).toBe('Invalid, expired or revoked token')
    })

    it('accepts the scheme in any letter case', async () => {
      const user = await t.make.user()
      const res = await t.http('GET', '/api/v1/user', { headers: { authorization: `bearer ${user.token}` } })
      expect(res.status).toBe(200)
      expect(res.body.data.id).toBe(user.id)
    })

    it('answers 401 for an expired basic token and accepts one that expires later', async () => {
      const user = await t.make.user()
      await t.sql("update access_tokens set expires_at = now() - interval '1 second' where token_hash = ?", [sha256(user.token)])
      const res = await t.http('GET', '/api/v1/user', { token: user.token })
      expectErrorBody(res, 401, 'UNAUTHORIZED', 'Invalid, expired or revoked token')
      const error = await trpcError(t.as(user).user.me())
      expect(error.code).toBe('UNAUTHORIZED')
      await t.sql("update access_tokens set expires_at = now() + interval '1 minute' where token_hash = ?", [sha256(user.token)])
      expect((await t.as(user).user.me()).data.id).toBe(user.id)
    })

    it('answers 401 for a revoked token', async () => {
      const user = await t.make.user()
      await t.sql('update access_tokens set revoked_at = now() where token_hash = ?', [sha256(user.token)])
      expectErrorBody(await t.http('GET', '/api/v1/user', { token: user.token }), 401, 'UNAUTHORIZED', 'Invalid, expired or revoked token')
      expect((await trpcError(t.as(user).user.token())).code).toBe('UNAUTHORIZED')
    })

    it('echoes a well-formed X-Request-Id as request_id and replaces a malformed one', async () => {
      const given = await t.http('GET', '/api/v1/user', { headers: { 'x-request-id': 'client-req-42' } })
      expect(given.headers.get('x-request-id')).toBe('client-req-42')
      expectErrorBody(given, 401, 'UNAUTHORIZED')
      expect(given.body.request_id).toBe('client-req-42')
      const replaced = await t.http('GET', '/api/v1/user', { headers: { 'x-request-id': 'has spaces and / slashes' } })
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
      expectErrorBody(replaced, 401, 'UNAUTHORIZED')
    })
  })

  describe('every authenticated operation answers 401 for a missing, malformed, unknown, expired or revoked token', () => {
    type Caller = ReturnType<TestApp['caller']>
    const SOME_UUID = '01890000-0000-7000-8000-000000000001'
    const operations: [string, string, string, unknown, (caller: Caller) => Promise<unknown>][] = [
      ['auth.logout', 'POST', '/api/v1/auth/logout', undefined, (caller) => caller.auth.logout({})],
      ['user.me', 'GET', '/api/v1/user', undefined, (caller) => caller.user.me()],
      ['user.token', 'GET', '/api/v1/user/token', undefined, (caller) => caller.user.token()],
      ['accessTokens.list', 'GET', '/api/v1/access-tokens', undefined, (caller) => caller.accessTokens.list({})],
      [
        'accessTokens.create',
        'POST',
        '/api/v1/access-tokens',
        { name: 'never made' },
        (caller) => caller.accessTokens.create({ name: 'never made' }),
      ],
      [
        'accessTokens.delete',
        'DELETE',
        `/api/v1/access-tokens/${SOME_UUID}`,
        undefined,
        (caller) => caller.accessTokens.delete({ token_uuid: SOME_UUID }),
      ],
    ]
    const UNKNOWN = 'Invalid, expired or revoked token'
    let badTokens: [string, Record<string, string>, string][]
    beforeAll(async () => {
      const expired = await t.make.user()
      await t.sql("update access_tokens set expires_at = now() - interval '1 second' where token_hash = ?", [sha256(expired.token)])
      const revoked = await t.make.user()
      await t.as(revoked).auth.logout({})
      badTokens = [
        ['missing', {}, 'Missing bearer token'],
        ['malformed', { authorization: 'Bearer not-a-token!' }, 'Invalid bearer token'],
        ['unknown', { authorization: `Bearer wst_${'Q'.repeat(43)}` }, UNKNOWN],
        ['expired', { authorization: `Bearer ${expired.token}` }, UNKNOWN],
        ['revoked', { authorization: `Bearer ${revoked.token}` }, UNKNOWN],
      ]
    })

    it.each(operations)('%s (%s %s)', async (_name, method, path, body, call) => {
      for (const [kind, headers, message] of badTokens) {
        const res = await t.http(method, path, { headers, body })
        expect({ kind, status: res.status }).toEqual({ kind, status: 401 })
        expectErrorBody(res, 401, 'UNAUTHORIZED', message)
        const error = await trpcError(call(t.caller(headers)))
        expect({ kind, code: error.code, message: error.message }).toEqual({ kind, code: 'UNAUTHORIZED', message })
      }
      expect(await t.sql("select count(*)::int as n from access_tokens where name = 'never made'")).toEqual([{ n: 0 }])
    })
  })

  describe('auth.logout (POST /api/v1/auth/logout)', () => {
    it('answers 204 with an empty body and revokes exactly the token used', async () => {
      const user = await t.make.user()
      const second = await t.caller().auth.signIn({ email: user.email, password: user.password })
      const res = await t.http('POST', '/api/v1/auth/logout', { token: user.token, body: {} })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expectErrorBody(await t.http('GET', '/api/v1/user', { token: user.token }), 401, 'UNAUTHORIZED', 'Invalid, expired or revoked token')
      const stillValid = await t.http('GET', '/api/v1/user', { token: second.data.access_token })
      expect(stillValid.status).toBe(200)
      expect(stillValid.body.data.id).toBe(user.id)
      const rows = await t.sql('select token_hash, revoked_at is not null as revoked from access_tokens where user_id = ? order by id', [
        user.id,
      ])
      expect(rows).toEqual([
        { token_hash: sha256(user.token), revoked: true },
        { token_hash: sha256(second.data.access_token), revoked: false },
      ])
    })

    it('answers 204 with no Content-Type and no body', async () => {
      const user = await t.make.user()
      const res = await t.http('POST', '/api/v1/auth/logout', { token: user.token })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await t.http('GET', '/api/v1/user', { token: user.token })).status).toBe(401)
    })

    it('revokes through the caller too, and the revoked token cannot log out again', async () => {
      const user = await t.make.user()
      await expect(t.as(user).auth.logout({})).resolves.toBeUndefined()
      const error = await trpcError(t.as(user).auth.logout({}))
      expect(error.code).toBe('UNAUTHORIZED')
      expectErrorBody(
        await t.http('POST', '/api/v1/auth/logout', { token: user.token }),
        401,
        'UNAUTHORIZED',
        'Invalid, expired or revoked token',
      )
    })

    it('lets a read-only application token log out, revoking only that token', async () => {
      const user = await t.make.user()
      const app = await t.as(user).accessTokens.create({ name: 'read only', abilities: ['read'] })
      const res = await t.http('POST', '/api/v1/auth/logout', { token: app.data.access_token })
      expect(res.status).toBe(204)
      expect((await t.http('GET', '/api/v1/user', { token: app.data.access_token })).status).toBe(401)
      expect((await t.http('GET', '/api/v1/user', { token: user.token })).status).toBe(200)
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('POST', '/api/v1/auth/logout'), 401, 'UNAUTHORIZED', 'Missing bearer token')
      expect((await trpcError(t.caller().auth.logout({}))).code).toBe('UNAUTHORIZED')
    })

    it('answers 400 for an unknown body field and keeps the token', async () => {
      const user = await t.make.user()
      const res = await t.http('POST', '/api/v1/auth/logout', { token: user.token, body: { everywhere: true } })
      expectErrorBody(res, 400, 'BAD_REQUEST', 'Input validation failed')
      expect(res.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['everywhere'] })
      expect((await t.http('GET', '/api/v1/user', { token: user.token })).status).toBe(200)
    })

    it('answers 415 for a body that is not JSON and keeps the token', async () => {
      const user = await t.make.user()
      const res = await t.http('POST', '/api/v1/auth/logout', {
        token: user.token,
        rawBody: 'bye',
        headers: { 'content-type': 'text/plain' },
      })
      expectErrorBody(res, 415, 'UNSUPPORTED_MEDIA_TYPE')
      expect((await t.http('GET', '/api/v1/user', { token: user.token })).status).toBe(200)
    })
  })

  describe('X-Service-Authorization (service scope)', () => {
    it('gives users and their workspace the service_id of the key used at sign-up', async () => {
      const res = await t.http('POST', '/api/v1/auth/sign-up', {
        headers: { 'x-service-authorization': ACME_KEY },
        body: { name: 'Wile Coyote', email: 'wile@example.com', password: PASSWORD },
      })
      expect(res.status).toBe(201)
      expect(res.body.data.user.service_id).toBe('acme')
      expect(res.body.data.user.primary_workspace.service_id).toBe('acme')
      const [user] = await t.sql(
        'select u.service_id as u, w.service_id as w from users u join workspaces w on w.id = u.primary_workspace_id where u.id = ?',
        [res.body.data.user.id],
      )
      expect(user).toEqual({ u: 'acme', w: 'acme' })
      const [token] = await t.sql('select service_id from access_tokens where token_hash = ?', [sha256(res.body.data.access_token)])
      expect(token.service_id).toBe('acme')
    })

    it('lets the same e-mail sign up separately without a key and under another service', async () => {
      const email = 'shared.person@example.com'
      const acme = await t.make.user({ email, serviceKey: ACME_KEY })
      const plain = await t.make.user({ email })
      const globex = await t.make.user({ email, serviceKey: GLOBEX_KEY })
      expect(new Set([acme.id, plain.id, globex.id]).size).toBe(3)
      const rows = await t.sql('select id, service_id from users where email = ? order by id', [email])
      expect(rows).toEqual([
        { id: acme.id, service_id: 'acme' },
        { id: plain.id, service_id: null },
        { id: globex.id, service_id: 'globex' },
      ])
      const again = await t.http('POST', '/api/v1/auth/sign-up', {
        headers: { 'x-service-authorization': GLOBEX_KEY },
        body: { name: 'Again', email: 'Shared.Person@example.com', password: PASSWORD },
      })
      expectIssues(again, [['email']])
      const signIn = await t.caller({ 'x-service-authorization': GLOBEX_KEY }).auth.signIn({ email, password: PASSWORD })
      expect(signIn.data.user).toMatchObject({ id: globex.id, service_id: 'globex' })
      const signInPlain = await t.caller().auth.signIn({ email, password: PASSWORD })
      expect(signInPlain.data.user).toMatchObject({ id: plain.id, service_id: null })
    })

    it('answers 401 for a scoped user token used without the header or with another service key', async () => {
      const acme = await t.make.user({ serviceKey: ACME_KEY })
      const ok = await t.http('GET', '/api/v1/user', { token: acme.token, headers: { 'x-service-authorization': ACME_KEY } })
      expect(ok.status).toBe(200)
      expect(ok.body.data).toMatchObject({ id: acme.id, service_id: 'acme' })
      expectErrorBody(await t.http('GET', '/api/v1/user', { token: acme.token }), 401, 'UNAUTHORIZED', 'Invalid, expired or revoked token')
      expectErrorBody(
        await t.http('GET', '/api/v1/user', { token: acme.token, headers: { 'x-service-authorization': GLOBEX_KEY } }),
        401,
        'UNAUTHORIZED',
        'Invalid, expired or revoked token',
      )
      expect((await trpcError(t.as(acme).user.me())).code).toBe('UNAUTHORIZED')
      expect((await t.as(acme, { 'x-service-authorization': ACME_KEY }).user.me()).data.id).toBe(acme.id)
    })

    it('answers 401 for an unscoped user token sent with a service key', async () => {
      const plain = await t.make.user()
      const res = await t.http('GET', '/api/v1/user', { token: plain.token, headers: { 'x-service-authorization': ACME_KEY } })
      expectErrorBody(res, 401, 'UNAUTHORIZED')
    })

    it('answers 401 for an invalid non-empty key, even on public procedures', async () => {
      const plain = await t.make.user()
      const headers = { 'x-service-authorization': 'not-a-configured-key' }
      expectErrorBody(await t.http('GET', '/api/v1/user', { token: plain.token, headers }), 401, 'UNAUTHORIZED', 'Invalid service key')
      expectErrorBody(
        await t.http('POST', '/api/v1/auth/sign-up', { headers, body: { name: 'X', email: 'badkey@example.com', password: PASSWORD } }),
        401,
        'UNAUTHORIZED',
        'Invalid service key',
      )
      expectErrorBody(await t.http('GET', '/api/v1/ping', { headers }), 401, 'UNAUTHORIZED', 'Invalid service key')
      const error = await trpcError(t.caller(headers).auth.signIn({ email: plain.email, password: plain.password }))
      expect(error.code).toBe('UNAUTHORIZED')
      expect(error.message).toBe('Invalid service key')
      const [{ n }] = await t.sql('select count(*)::int as n from users where email = ?', ['badkey@example.com'])
      expect(n).toBe(0)
    })

    it('ignores an empty (or blank) header', async () => {
      const plain = await t.make.user()
      for (const value of ['', '   ']) {
        const res = await t.http('GET', '/api/v1/user', { token: plain.token, headers: { 'x-service-authorization': value } })
        expect(res.status).toBe(200)
        expect(res.body.data).toMatchObject({ id: plain.id, service_id: null })
        expect((await t.as(plain, { 'x-service-authorization': value }).user.me()).data.id).toBe(plain.id)
      }
      const signUp = await t.http('POST', '/api/v1/auth/sign-up', {
        headers: { 'x-service-authorization': '' },
        body: { name: 'Empty Key', email: 'empty.key@example.com', password: PASSWORD },
      })
      expect(signUp.status).toBe(201)
      expect(signUp.body.data.user.service_id).toBeNull()
    })
  })
})

describe('auth.signUp with SIGN_UP_ENABLED=false', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ SIGN_UP_ENABLED: 'false' })
  })
  afterAll(async () => t?.close())

  it('answers 403 FORBIDDEN and creates nobody', async () => {
    const res = await t.http('POST', '/api/v1/auth/sign-up', { body: { name: 'Closed', email: 'closed@example.com', password: PASSWORD } })
    expectErrorBody(res, 403, 'FORBIDDEN', 'Sign-up is disabled on this server')
    const error = await trpcError(t.caller().auth.signUp({ name: 'Closed', email: 'closed@example.com', password: PASSWORD }))
    expect(error.code).toBe('FORBIDDEN')
    expect(await t.sql('select count(*)::int as n from users')).toEqual([{ n: 0 }])
    expect(await t.sql('select count(*)::int as n from workspaces')).toEqual([{ n: 0 }])
  })

  it('still answers sign-in (401 for unknown credentials)', async () => {
    const res = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: 'closed@example.com', password: PASSWORD } })
    expectErrorBody(res, 401, 'UNAUTHORIZED', 'Invalid credentials')
  })
})

describe('sign-in rate limit per e-mail (SIGN_IN_MAX_PER_EMAIL=3)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ SIGN_IN_MAX_PER_EMAIL: '3', SIGN_IN_WINDOW_SECONDS: '120' })
  })
  afterAll(async () => t?.close())

  it('answers 429 with Retry-After on the 4th attempt, even with the right password', async () => {
    const user = await t.make.user()
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const res = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: 'wrong password' } })
      expect(res.status).toBe(401)
    }
    const limited = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: user.password } })
    expectErrorBody(limited, 429, 'TOO_MANY_REQUESTS', 'Too many attempts, try again later')
    const retryAfter = Number(limited.headers.get('retry-after'))
    expect(Number.isInteger(retryAfter)).toBe(true)
    expect(retryAfter).toBeGreaterThan(60)
    expect(retryAfter).toBeLessThanOrEqual(120)
    const error = await trpcError(t.caller().auth.signIn({ email: user.email, password: user.password }))
    expect(error.code).toBe('TOO_MANY_REQUESTS')
    const [{ n }] = await t.sql("select count(*)::int as n from access_tokens where user_id = ? and kind = 'basic'", [user.id])
    expect(n).toBe(1)
  })

  it('counts the e-mail in any letter case as one', async () => {
    const user = await t.make.user({ email: 'case.limit@example.com' })
    for (const email of ['case.limit@example.com', 'CASE.limit@example.com', 'Case.Limit@Example.Com']) {
      expect((await t.http('POST', '/api/v1/auth/sign-in', { body: { email, password: 'nope nope' } })).status).toBe(401)
    }
    const limited = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: 'case.limit@EXAMPLE.COM', password: user.password } })
    expect(limited.status).toBe(429)
  })

  it('counts each e-mail separately: another e-mail still signs in', async () => {
    const limited = await t.make.user()
    const other = await t.make.user()
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      await t.http('POST', '/api/v1/auth/sign-in', { body: { email: limited.email, password: 'wrong password' } })
    }
    const res = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: other.email, password: other.password } })
    expect(res.status).toBe(200)
    expect(res.body.data.user.id).toBe(other.id)
  })

  it('counts unknown e-mails too, so limiting says nothing about existence', async () => {
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      expect((await t.http('POST', '/api/v1/auth/sign-in', { body: { email: 'ghost@example.com', password: 'x' } })).status).toBe(401)
    }
    const res = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: 'ghost@example.com', password: 'x' } })
    expectErrorBody(res, 429, 'TOO_MANY_REQUESTS')
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
  })
})

describe('sign-in rate limit per address (SIGN_IN_MAX_PER_ADDRESS=3)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ SIGN_IN_MAX_PER_ADDRESS: '3' })
  })
  afterAll(async () => t?.close())

  it('answers 429 with Retry-After once one address has used its attempts, whatever the e-mail', async () => {
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const res = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: `someone${attempt}@example.com`, password: 'x' } })
      expect(res.status).toBe(401)
    }
    const limited = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: 'someone4@example.com', password: 'x' } })
    expectErrorBody(limited, 429, 'TOO_MANY_REQUESTS', 'Too many attempts, try again later')
    const retryAfter = Number(limited.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    const signUp = await t.http('POST', '/api/v1/auth/sign-up', { body: { name: 'Late', email: 'late@example.com', password: PASSWORD } })
    expectErrorBody(signUp, 429, 'TOO_MANY_REQUESTS')
    expect(signUp.headers.get('retry-after')).toMatch(/^\d+$/)
    const error = await trpcError(t.caller().auth.signIn({ email: 'someone5@example.com', password: 'x' }))
    expect(error.code).toBe('TOO_MANY_REQUESTS')
    expect(await t.sql('select count(*)::int as n from users')).toEqual([{ n: 0 }])
  })
})
