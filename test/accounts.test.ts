/**
 * Accounts (routers/accounts.router.ts, src/catalog/accounts.service.ts; docs/api/resources.md,
 * "accounts"): credentials of a provider in a workspace, the secret sealed at rest and never
 * answered or logged (only `secret_hint` / `has_secret`), tenancy and permissions of docs/api/tenancy.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyId } from '../src/platform/secrets.ts'
import { captureLogs, createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, ISO_Z, USER_KEYS, UUID, WORKSPACE_KEYS } from './helpers/expect.ts'
import { agentUsing, teamCast } from './helpers/resources.ts'

const ACCOUNT_KEYS = [
  'base_url',
  'created_at',
  'has_secret',
  'is_owner',
  'metadata',
  'name',
  'provider',
  'secret_hint',
  'updated_at',
  'user',
  'uuid',
  'visibility',
  'workspace',
]
/** A 404 that says nothing of the hidden account. */
const expectHidden = hiddenCheck('Account')

describe('accounts', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  let reader: string
  let team: { uuid: string }
  let inTeam: () => Record<string, string>
  let openaiCompatible: { uuid: string; slug: string; name: string }

  beforeAll(async () => {
    ;({ t, alice, bob, carol, dave, reader, team, inTeam } = await teamCast('Account Team'))
    openaiCompatible = (await t.as(alice).providers.list({ search: 'openai-compatible' })).data.find((p) => p.slug === 'openai-compatible')!
  })
  afterAll(async () => t?.close())

  const teamAccount = async (overrides: Record<string, unknown> = {}, user: TestUser = alice) =>
    (await t.as(user, inTeam()).accounts.create({ name: 'Team key', provider_uuid: openaiCompatible.uuid, ...overrides })).data
  const row = async (uuid: string) =>
    (await t.sql('select name, visibility, secret_ciphertext, secret_key_id, secret_hint, base_url, metadata, provider_id, deleted_at from accounts where uuid = ?', [uuid]))[0]

  describe('accounts.create (POST /api/v1/accounts)', () => {
    it('answers 201 with the exact shape: provider embedded, the secret masked, sealed at rest under APP_KEY', async () => {
      const secret = 'sk-live-0123456789abcdefWXYZ'
      const res = await t.http('POST', '/api/v1/accounts', {
        token: alice.token,
        headers: inTeam(),
        body: {
          name: 'vLLM cluster',
          provider_uuid: openaiCompatible.uuid,
          secret,
          base_url: 'https://vllm.internal.test/v1',
          visibility: 'workspace',
          metadata: { team: 'research' },
        },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const account = res.body.data
      expect(Object.keys(account).sort()).toEqual(ACCOUNT_KEYS)
      expect(account.uuid).toMatch(UUID)
      expect(account).toMatchObject({
        name: 'vLLM cluster',
        provider: { uuid: openaiCompatible.uuid, slug: 'openai-compatible', name: 'OpenAI-compatible', type: 'llm', driver: 'openai-compatible' },
        visibility: 'workspace',
        secret_hint: 'sk-...WXYZ',
        has_secret: true,
        base_url: 'https://vllm.internal.test/v1',
        metadata: { team: 'research' },
        is_owner: true,
      })
      expect(Object.keys(account.provider).sort()).toEqual(['driver', 'name', 'slug', 'type', 'uuid'])
      expect(Object.keys(account.user).sort()).toEqual(USER_KEYS)
      expect(account.user).toMatchObject({ id: alice.id, primary_workspace: null })
      expect(Object.keys(account.workspace).sort()).toEqual(WORKSPACE_KEYS)
      expect(account.workspace).toMatchObject({ uuid: team.uuid, user: null })
      expect(account.created_at).toMatch(ISO_Z)
      const stored = await row(account.uuid)
      expect(stored.secret_key_id).toBe(keyId(t.config.appKey))
      expect(String(stored.secret_ciphertext)).not.toContain(secret)
      expect(Buffer.from(String(stored.secret_ciphertext), 'base64').length).toBe(12 + 16 + secret.length)
      expect(JSON.stringify(res.body)).not.toContain(String(stored.secret_ciphertext))
    })

    it('defaults: private, no secret (hint null, has_secret false), no base_url, empty metadata; short secrets mask fully', async () => {
      const bare = await t.as(alice).accounts.create({ name: 'No secret', provider_uuid: openaiCompatible.uuid })
      expect(bare.data).toMatchObject({ visibility: 'private', secret_hint: null, has_secret: false, base_url: null, metadata: {} })
      const explicitNull = await t.as(alice).accounts.create({ name: 'Null secret', provider_uuid: openaiCompatible.uuid, secret: null })
      expect(explicitNull.data.has_secret).toBe(false)
      const short = await t.as(alice).accounts.create({ name: 'Short', provider_uuid: openaiCompatible.uuid, secret: 'abc12345678' })
      expect(short.data).toMatchObject({ secret_hint: '****', has_secret: true })
    })

    it('accepts a custom provider visible in the workspace, and a public one of another tenant', async () => {
      const custom = (await t.as(carol, inTeam()).providers.create({ name: 'Team tools', type: 'tool', base_url: 'https://t.test' })).data
      const account = await teamAccount({ provider_uuid: custom.uuid, secret: 'token-for-team-tools' })
      expect(account.provider).toEqual({ uuid: custom.uuid, slug: custom.slug, name: 'Team tools', type: 'tool', driver: 'http' })
      const open = (await t.as(bob).providers.create({ name: 'Bob public', type: 'tool', base_url: 'https://b.test', visibility: 'public' })).data
      expect((await teamAccount({ provider_uuid: open.uuid })).provider.uuid).toBe(open.uuid)
    })

    it("answers 400 naming provider_uuid for another tenant's provider, a deleted one and an unknown one, revealing nothing", async () => {
      const hidden = (await t.as(bob).providers.create({ name: 'Bob hidden provider', type: 'llm', base_url: 'https://h.test' })).data
      const gone = (await t.as(alice).providers.create({ name: 'Gone provider', type: 'llm', base_url: 'https://g.test' })).data
      await t.as(alice).providers.delete({ provider_uuid: gone.uuid })
      for (const uuid of [hidden.uuid, gone.uuid, '01234567-89ab-4def-8123-456789abcdef']) {
        const res = await t.http('POST', '/api/v1/accounts', { token: alice.token, body: { name: 'Nope', provider_uuid: uuid } })
        expectInvalid(res, 'provider_uuid')
        expect(res.body.issues).toEqual([{ code: 'custom', path: ['provider_uuid'], message: 'No provider you can use has this uuid' }])
        expect(JSON.stringify(res.body)).not.toContain(hidden.name)
      }
      expect(await t.sql('select 1 from accounts where name = ?', ['Nope'])).toHaveLength(0)
    })

    it.each([
      ['a missing name', { name: undefined }, 'name'],
      ['a blank name', { name: ' ' }, 'name'],
      ['a missing provider_uuid', { provider_uuid: undefined }, 'provider_uuid'],
      ['a malformed provider_uuid', { provider_uuid: 'openai' }, 'provider_uuid'],
      ['public visibility (accounts never are)', { visibility: 'public' }, 'visibility'],
      ['an empty secret', { secret: '' }, 'secret'],
      ['a secret that is not a string', { secret: 12345678901234 }, 'secret'],
      ['a secret over 8 KiB of characters', { secret: 'k'.repeat(8193) }, 'secret'],
      ['a secret over 8 KiB of UTF-8 bytes', { secret: '€'.repeat(3000) }, 'secret'],
      ['a secret with a NUL character', { secret: 'sk-\u0000-secret' }, 'secret'],
      ['a base_url that is not http(s)', { base_url: 'file:///etc/passwd' }, 'base_url'],
      ['metadata with a non-string value', { metadata: { n: true } }, 'metadata.n'],
    ])('answers 400 naming the field for %s', async (_label, overrides, path) => {
      const res = await t.http('POST', '/api/v1/accounts', {
        token: alice.token,
        body: { name: 'Invalid', provider_uuid: openaiCompatible.uuid, ...overrides },
      })
      expectInvalid(res, path)
    })

    it('never echoes a refused secret in the error body', async () => {
      const secret = `sk-refused-${'z'.repeat(8200)}`
      const res = await t.http('POST', '/api/v1/accounts', { token: alice.token, body: { name: 'x', provider_uuid: openaiCompatible.uuid, secret } })
      expectInvalid(res, 'secret')
      expect(JSON.stringify(res.body)).not.toContain('sk-refused-')
      const other = await t.http('POST', '/api/v1/accounts', {
        token: alice.token,
        body: { name: 'x', provider_uuid: openaiCompatible.uuid, secret: 'sk-valid-but-rejected-1234', visibility: 'public' },
      })
      expectInvalid(other, 'visibility')
      expect(JSON.stringify(other.body)).not.toContain('sk-valid-but-rejected-1234')
    })

    it('answers 400 for an unknown field, 401 without a token, 403 for a read-only token; nothing is created', async () => {
      const unknown = await t.http('POST', '/api/v1/accounts', {
        token: alice.token,
        body: { name: 'Unknown field', provider_uuid: openaiCompatible.uuid, secret_ciphertext: 'x' },
      })
      expect(unknown.status).toBe(400)
      expect(unknown.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['secret_ciphertext'] })
      expectErrorBody(await t.http('POST', '/api/v1/accounts', { body: { name: 'No token', provider_uuid: openaiCompatible.uuid } }), 401, 'UNAUTHORIZED')
      expectErrorBody(
        await t.http('POST', '/api/v1/accounts', { token: reader, body: { name: 'Read only', provider_uuid: openaiCompatible.uuid } }),
        403,
        'FORBIDDEN',
      )
      expect(await t.sql(`select 1 from accounts where name in ('Unknown field', 'No token', 'Read only')`)).toHaveLength(0)
    })

    it('answers 404 for a workspace context the caller is not a member of, creating nothing', async () => {
      const res = await t.http('POST', '/api/v1/accounts', {
        token: bob.token,
        headers: inTeam(),
        body: { name: 'Into the team', provider_uuid: openaiCompatible.uuid },
      })
      expect(res.status).toBe(404)
      expect(await t.sql('select 1 from accounts where name = ?', ['Into the team'])).toHaveLength(0)
    })
  })

  describe('accounts.list (GET /api/v1/accounts)', () => {
    it("lists what the caller may see in the workspace: own, workspace-visible; not a member's private ones nor another tenant's", async () => {
      const shared = await teamAccount({ name: 'Shared team key', visibility: 'workspace' })
      const alicePrivate = await teamAccount({ name: 'Alice private key', visibility: 'private' })
      const carolPrivate = await teamAccount({ name: 'Carol private key' }, carol)
      const bobs = (await t.as(bob).accounts.create({ name: 'Bob key', provider_uuid: openaiCompatible.uuid, visibility: 'workspace' })).data

      const res = await t.http('GET', '/api/v1/accounts?per_page=100', { token: carol.token, headers: inTeam() })
      expect(res.status).toBe(200)
      const uuids = res.body.data.map((a: { uuid: string }) => a.uuid)
      expect(uuids).toEqual(expect.arrayContaining([shared.uuid, carolPrivate.uuid]))
      expect(uuids).not.toContain(alicePrivate.uuid)
      expect(uuids).not.toContain(bobs.uuid)
      for (const account of res.body.data) {
        expect(Object.keys(account).sort()).toEqual(ACCOUNT_KEYS)
        expect(account.user).toBeNull()
        expect(account.workspace).toBeNull()
      }
      // Workspace owners and admins see every account of their workspace (never the secret).
      const asAdmin = await t.http('GET', '/api/v1/accounts?per_page=100', { token: dave.token, headers: inTeam() })
      expect(asAdmin.body.data.map((a: { uuid: string }) => a.uuid)).toEqual(expect.arrayContaining([alicePrivate.uuid, carolPrivate.uuid]))
    })

    it('embeds user and workspace with `with`, filters by provider_uuid and search, paginates and sorts', async () => {
      const custom = (await t.as(alice, inTeam()).providers.create({ name: 'Filter provider', type: 'llm', base_url: 'https://f.test' })).data
      const a = await teamAccount({ name: 'Zeta filter key', provider_uuid: custom.uuid })
      const b = await teamAccount({ name: 'alpha filter key', provider_uuid: custom.uuid })
      const res = await t.http('GET', `/api/v1/accounts?provider_uuid=${custom.uuid}&with=user,workspace&sort=name`, {
        token: alice.token,
        headers: inTeam(),
      })
      expect(res.status).toBe(200)
      expect(res.body.data.map((x: { uuid: string }) => x.uuid)).toEqual([b.uuid, a.uuid])
      expect(res.body.data[0].user).toMatchObject({ id: alice.id, primary_workspace: null })
      expect(res.body.data[0].workspace).toMatchObject({ uuid: team.uuid, user: null })
      const search = await t.http('GET', '/api/v1/accounts?search=ZETA', { token: alice.token, headers: inTeam() })
      expect(search.body.data.map((x: { uuid: string }) => x.uuid)).toEqual([a.uuid])
      const paged = await t.http('GET', `/api/v1/accounts?provider_uuid=${custom.uuid}&per_page=1&page=2&sort=-name`, { token: alice.token, headers: inTeam() })
      expect(paged.body.data.map((x: { uuid: string }) => x.uuid)).toEqual([b.uuid])
      expect(paged.body.meta).toMatchObject({ total: 2, current_page: 2, last_page: 2 })
    })

    it.each([
      ['an unknown relation in with', 'with=secret', 'with.0'],
      ['a malformed provider_uuid', 'provider_uuid=abc', 'provider_uuid'],
      ['an unknown sort', 'sort=secret_hint', 'sort'],
    ])('answers 400 for %s', async (_label, query, path) => {
      expectInvalid(await t.http('GET', `/api/v1/accounts?${query}`, { token: alice.token }), path)
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/accounts'), 401, 'UNAUTHORIZED')
    })
  })

  describe('accounts.retrieve (GET /api/v1/accounts/{account_uuid})', () => {
    it('answers the account with user and workspace embedded', async () => {
      const account = await teamAccount({ name: 'Retrieved', visibility: 'workspace', secret: 'sk-retrieve-me-0000' })
      const res = await t.http('GET', `/api/v1/accounts/${account.uuid}`, { token: carol.token, headers: inTeam() })
      expect(res.status).toBe(200)
      expect(res.body.data).toEqual({ ...account, is_owner: false, workspace: { ...account.workspace, is_owner: false } })
    })

    it("answers 404 for another tenant's account and for a member's private one, revealing nothing", async () => {
      const privateOne = await teamAccount({ name: 'Private of Alice' })
      expectHidden(await t.http('GET', `/api/v1/accounts/${privateOne.uuid}`, { token: bob.token }), privateOne)
      expectHidden(await t.http('GET', `/api/v1/accounts/${privateOne.uuid}`, { token: carol.token, headers: inTeam() }), privateOne)
      expectErrorBody(await t.http('GET', `/api/v1/accounts/${privateOne.uuid}`), 401, 'UNAUTHORIZED')
    })

    it('answers 400 naming account_uuid for a malformed uuid, and with for an unknown relation', async () => {
      expectInvalid(await t.http('GET', '/api/v1/accounts/0123-abcd', { token: alice.token }), 'account_uuid')
      const account = await teamAccount({ name: 'Queried' })
      expectInvalid(await t.http('GET', `/api/v1/accounts/${account.uuid}?with=secret`, { token: alice.token, headers: inTeam() }), 'with.0')
    })
  })

  describe('accounts.update (PUT /api/v1/accounts/{account_uuid})', () => {
    it('keeps every key of concurrent updates of different metadata keys (the row is locked)', async () => {
      const account = await teamAccount({ metadata: { a: '1' } })
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`)
      // Callers, not HTTP: every update starts in the same tick, so their statements interleave.
      await Promise.all(keys.map((key) => t.as(alice, inTeam()).accounts.update({ account_uuid: account.uuid, metadata: { [key]: key } })))
      const stored = (await t.as(alice, inTeam()).accounts.retrieve({ account_uuid: account.uuid })).data.metadata
      expect(stored).toEqual({ a: '1', ...Object.fromEntries(keys.map((key) => [key, key])) })
    })

    it('keeps omitted fields, replaces and clears the secret, clears base_url, merges metadata', async () => {
      const account = await teamAccount({ secret: 'sk-first-secret-1111', base_url: 'https://a.test', metadata: { a: '1', b: '2' } })
      const first = await row(account.uuid)
      const res = await t.http('PUT', `/api/v1/accounts/${account.uuid}`, {
        token: alice.token,
        headers: inTeam(),
        body: { name: 'Renamed key', secret: 'sk-second-secret-2222', base_url: null, metadata: { a: null, c: '3' } },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body.data).sort()).toEqual(ACCOUNT_KEYS)
      expect(res.body.data).toMatchObject({
        uuid: account.uuid,
        name: 'Renamed key',
        visibility: 'private',
        secret_hint: 'sk-...2222',
        has_secret: true,
        base_url: null,
        metadata: { b: '2', c: '3' },
        provider: account.provider,
      })
      const second = await row(account.uuid)
      expect(second.secret_ciphertext).not.toBe(first.secret_ciphertext)
      const keep = await t.as(alice, inTeam()).accounts.update({ account_uuid: account.uuid, visibility: 'workspace' })
      expect(keep.data).toMatchObject({ visibility: 'workspace', secret_hint: 'sk-...2222', name: 'Renamed key' })
      expect((await row(account.uuid)).secret_ciphertext).toBe(second.secret_ciphertext)
      const cleared = await t.as(alice, inTeam()).accounts.update({ account_uuid: account.uuid, secret: null })
      expect(cleared.data).toMatchObject({ secret_hint: null, has_secret: false })
      expect(await row(account.uuid)).toMatchObject({ secret_ciphertext: null, secret_key_id: null, secret_hint: null })
    })

    it('changes the provider to another visible one; 400 for an invisible one; 409 while agents bind the account', async () => {
      const account = await teamAccount({ name: 'Movable' })
      const ollama = (await t.as(alice).providers.list({ search: 'ollama' })).data[0]
      const moved = await t.as(alice, inTeam()).accounts.update({ account_uuid: account.uuid, provider_uuid: ollama.uuid })
      expect(moved.data.provider.slug).toBe('ollama')
      const hidden = (await t.as(bob).providers.create({ name: 'Bob only', type: 'llm', base_url: 'https://b.test' })).data
      expectInvalid(
        await t.http('PUT', `/api/v1/accounts/${account.uuid}`, { token: alice.token, headers: inTeam(), body: { provider_uuid: hidden.uuid, name: 'x' } }),
        'provider_uuid',
      )
      expect((await row(account.uuid)).name).toBe('Movable')

      const tool = await t.as(alice, inTeam()).tools.create({ name: 'Bound tool', url: 'https://x.test' })
      const agentId = await agentUsing(t, { userId: alice.id, workspaceUuid: team.uuid, toolUuid: tool.data.uuid, accountUuid: account.uuid })
      const conflict = await t.http('PUT', `/api/v1/accounts/${account.uuid}`, {
        token: alice.token,
        headers: inTeam(),
        body: { provider_uuid: openaiCompatible.uuid, name: 'Not renamed' },
      })
      expectErrorBody(conflict, 409, 'CONFLICT')
      expect((await row(account.uuid)).name).toBe('Movable')
      const same = await t.as(alice, inTeam()).accounts.update({ account_uuid: account.uuid, provider_uuid: ollama.uuid, name: 'Same provider' })
      expect(same.data.name).toBe('Same provider')

      // Deleting the account unbinds it from the agent's tool (what the foreign key does on a hard delete).
      await t.as(alice, inTeam()).accounts.delete({ account_uuid: account.uuid })
      const [pivot] = await t.sql('select account_id from agent_tools where agent_id = ?', [agentId])
      expect(pivot.account_id).toBeNull()
    })

    it.each([
      ['a public visibility', { visibility: 'public' }, 'visibility'],
      ['an empty secret', { secret: '' }, 'secret'],
      ['a bad base_url', { base_url: 'not a url' }, 'base_url'],
      ['a metadata number', { metadata: { x: 1 } }, 'metadata.x'],
      ['a null name', { name: null }, 'name'],
    ])('answers 400 naming the field for %s and changes nothing', async (_label, patch, path) => {
      const account = await teamAccount({ secret: 'sk-unchanged-000000' })
      const before = await row(account.uuid)
      expectInvalid(await t.http('PUT', `/api/v1/accounts/${account.uuid}`, { token: alice.token, headers: inTeam(), body: patch }), path)
      expect(await row(account.uuid)).toEqual(before)
    })

    it("answers 403 to a member updating another member's workspace-visible account; the workspace admin may", async () => {
      const account = await teamAccount({ name: 'Alice shared', visibility: 'workspace', secret: 'sk-alice-shared-0000' })
      const before = await row(account.uuid)
      const res = await t.http('PUT', `/api/v1/accounts/${account.uuid}`, { token: carol.token, headers: inTeam(), body: { secret: 'sk-carol-swap-0000' } })
      expectErrorBody(res, 403, 'FORBIDDEN', 'You may not change this account')
      expect(await row(account.uuid)).toEqual(before)
      const byAdmin = await t.as(dave, inTeam()).accounts.update({ account_uuid: account.uuid, name: 'Admin renamed' })
      expect(byAdmin.data.name).toBe('Admin renamed')
    })

    it("answers 404 for another tenant's account and leaves it unchanged; 401 without a token; 403 for a read-only token", async () => {
      const account = await teamAccount({ name: 'Tenant private', secret: 'sk-tenant-private-00' })
      const before = await row(account.uuid)
      expectHidden(await t.http('PUT', `/api/v1/accounts/${account.uuid}`, { token: bob.token, body: { name: 'Stolen' } }), account)
      expectErrorBody(await t.http('PUT', `/api/v1/accounts/${account.uuid}`, { body: { name: 'x' } }), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('PUT', `/api/v1/accounts/${account.uuid}`, { token: reader, headers: inTeam(), body: { name: 'x' } }), 403, 'FORBIDDEN')
      expect(await row(account.uuid)).toEqual(before)
    })

    it('answers 400 naming account_uuid for a malformed uuid', async () => {
      expectInvalid(await t.http('PUT', '/api/v1/accounts/0123-abcd', { token: alice.token, body: { name: 'x' } }), 'account_uuid')
    })
  })

  describe('accounts.delete (DELETE /api/v1/accounts/{account_uuid})', () => {
    it('soft-deletes (204): gone from retrieve and list', async () => {
      const account = await teamAccount({ name: 'Doomed key', visibility: 'workspace' })
      const res = await t.http('DELETE', `/api/v1/accounts/${account.uuid}`, { token: alice.token, headers: inTeam() })
      expect(res.status).toBe(204)
      expect((await row(account.uuid)).deleted_at).not.toBeNull()
      expect((await t.http('GET', `/api/v1/accounts/${account.uuid}`, { token: alice.token, headers: inTeam() })).status).toBe(404)
      const list = await t.http('GET', '/api/v1/accounts?per_page=100', { token: alice.token, headers: inTeam() })
      expect(list.body.data.map((a: { uuid: string }) => a.uuid)).not.toContain(account.uuid)
    })

    it("answers 403 to a member deleting another's account, 404 to another tenant, 403 for a read-only token, 401 without one", async () => {
      const account = await teamAccount({ name: 'Kept key', visibility: 'workspace' })
      expectErrorBody(await t.http('DELETE', `/api/v1/accounts/${account.uuid}`, { token: carol.token, headers: inTeam() }), 403, 'FORBIDDEN')
      expectHidden(await t.http('DELETE', `/api/v1/accounts/${account.uuid}`, { token: bob.token }), account)
      expectErrorBody(await t.http('DELETE', `/api/v1/accounts/${account.uuid}`, { token: reader, headers: inTeam() }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `/api/v1/accounts/${account.uuid}`), 401, 'UNAUTHORIZED')
      expect((await row(account.uuid)).deleted_at).toBeNull()
    })

    it('answers 400 naming account_uuid for a malformed uuid', async () => {
      expectInvalid(await t.http('DELETE', '/api/v1/accounts/0123-abcd', { token: alice.token }), 'account_uuid')
    })
  })
})

describe('account secrets never leave the server (docs/api/resources.md)', () => {
  const { log, lines } = captureLogs()
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp({}, { log })
  })
  afterAll(async () => t?.close())

  it('appear in no response body (create, list, retrieve, update, REST and tRPC) and no log line', async () => {
    const user = await t.make.user()
    const provider = (await t.as(user).providers.list({ search: 'anthropic' })).data[0]
    const first = 'sk-ant-FIRST-secret-value-0123456789'
    const second = 'sk-ant-SECOND-secret-value-9876543210'
    const bodies: string[] = []
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await t.http(method, path, { token: user.token, body })
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300)
      bodies.push(JSON.stringify(res.body))
      return res.body
    }
    const created = await call('POST', '/api/v1/accounts', { name: 'Leak check', provider_uuid: provider.uuid, secret: first, visibility: 'workspace' })
    const uuid = created.data.uuid
    await call('GET', '/api/v1/accounts?with=user,workspace')
    await call('GET', `/api/v1/accounts/${uuid}`)
    await call('PUT', `/api/v1/accounts/${uuid}`, { secret: second, name: 'Leak check 2' })
    await call('GET', `/api/v1/accounts/${uuid}`)
    const rpc = await t.http('POST', '/trpc/accounts.update', { token: user.token, body: { account_uuid: uuid, secret: first } })
    expect(rpc.status).toBe(200)
    bodies.push(JSON.stringify(rpc.body))
    const invalid = await t.http('PUT', `/api/v1/accounts/${uuid}`, { token: user.token, body: { secret: second, visibility: 'public' } })
    expect(invalid.status).toBe(400)
    bodies.push(JSON.stringify(invalid.body))

    const [stored] = await t.sql('select secret_ciphertext from accounts where uuid = ?', [uuid])
    const everything = bodies.join('\n')
    const logs = lines.join('')
    expect(lines.length).toBeGreaterThan(5)
    for (const secret of [first, second, first.slice(8, 30), second.slice(8, 30), String(stored.secret_ciphertext)]) {
      expect(everything).not.toContain(secret)
      expect(logs).not.toContain(secret)
    }
    expect(created.data.secret_hint).toBe('sk-...6789')
  })
})
