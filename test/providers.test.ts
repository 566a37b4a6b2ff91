/**
 * Providers (routers/providers.router.ts, src/catalog/providers.service.ts; docs/api/resources.md,
 * "providers"): the seeded built-ins listed to everyone and read-only, custom providers of a
 * workspace with the tenancy and permission rules of docs/api/tenancy.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp, TestUser } from './helpers/app.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, ISO_Z, trpcError, UUID } from './helpers/expect.ts'
import { teamCast } from './helpers/resources.ts'

const PROVIDER_KEYS = [
  'auth_parameter',
  'auth_scheme',
  'base_url',
  'created_at',
  'description',
  'driver',
  'is_builtin',
  'is_owner',
  'metadata',
  'name',
  'slug',
  'type',
  'updated_at',
  'uuid',
  'visibility',
]
const BUILTINS = ['anthropic', 'local', 'ollama', 'openai', 'openai-compatible']

/** A 404 that says nothing of the hidden provider. */
const expectHidden = hiddenCheck('Provider')

describe('providers', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  let reader: string
  /** alice's team workspace: carol `member`, dave `admin`. */
  let team: { uuid: string }
  let inTeam: () => Record<string, string>

  beforeAll(async () => {
    ;({ t, alice, bob, carol, dave, reader, team, inTeam } = await teamCast('Provider Team'))
  })
  afterAll(async () => t?.close())

  const body = (overrides: Record<string, unknown> = {}) => ({
    name: 'Search API',
    type: 'tool',
    base_url: 'https://search.example.com/v1',
    ...overrides,
  })
  /** A custom provider of alice's in the team workspace. */
  const teamProvider = async (overrides: Record<string, unknown> = {}) =>
    (await t.as(alice, inTeam()).providers.create({ ...body(), ...overrides } as never)).data
  const builtin = async (slug: string) => (await t.as(alice).providers.list({ search: slug, per_page: 100 })).data.find((p) => p.slug === slug)!
  const row = async (uuid: string) => (await t.sql('select name, slug, description, deleted_at, metadata from providers where uuid = ?', [uuid]))[0]

  describe('providers.list (GET /api/v1/providers)', () => {
    it('lists the five built-ins to every user with the exact Provider shape, read-only and owned by nobody', async () => {
      for (const user of [alice, bob]) {
        const res = await t.http('GET', '/api/v1/providers?type=llm&per_page=100', { token: user.token })
        expect(res.status).toBe(200)
        const builtins = res.body.data.filter((p: { is_builtin: boolean }) => p.is_builtin)
        expect(builtins.map((p: { slug: string }) => p.slug).sort()).toEqual(BUILTINS)
        for (const p of builtins) {
          expect(Object.keys(p).sort()).toEqual(PROVIDER_KEYS)
          expect(p).toMatchObject({ type: 'llm', is_owner: false, visibility: 'public', metadata: {} })
          expect(p.uuid).toMatch(UUID)
          expect(p.created_at).toMatch(ISO_Z)
        }
        expect(builtins.find((p: { slug: string }) => p.slug === 'anthropic')).toMatchObject({
          driver: 'anthropic',
          base_url: 'https://api.anthropic.com/v1',
          auth_scheme: 'header',
          auth_parameter: 'x-api-key',
        })
        expect(builtins.find((p: { slug: string }) => p.slug === 'local')).toMatchObject({ driver: 'local', auth_scheme: 'none' })
      }
    })

    it("lists the workspace's custom providers, never another tenant's private or workspace ones; filters by type and search", async () => {
      const mine = await teamProvider({ name: 'Team Weather', description: 'Forecasts by city' })
      const bobs = (await t.as(bob).providers.create({ ...body(), name: 'Bob Weather Secret' } as never)).data
      const res = await t.http('GET', '/api/v1/providers?type=tool&per_page=100', { token: carol.token, headers: inTeam() })
      expect(res.status).toBe(200)
      const uuids = res.body.data.map((p: { uuid: string }) => p.uuid)
      expect(uuids).toContain(mine.uuid)
      expect(uuids).not.toContain(bobs.uuid)
      expect(res.body.data.every((p: { type: string }) => p.type === 'tool')).toBe(true)
      expect(res.body.data.find((p: { uuid: string }) => p.uuid === mine.uuid).is_owner).toBe(false)

      const search = await t.http('GET', '/api/v1/providers?search=FORECASTS', { token: alice.token, headers: inTeam() })
      expect(search.body.data.map((p: { uuid: string }) => p.uuid)).toEqual([mine.uuid])
      const bySlug = await t.http('GET', '/api/v1/providers?search=anthrop', { token: alice.token })
      expect(bySlug.body.data.map((p: { slug: string }) => p.slug)).toEqual(['anthropic'])
      const literal = await t.http('GET', '/api/v1/providers?search=%25', { token: alice.token })
      expect(literal.body.data).toEqual([])
      // Outside the team workspace (alice's primary), the team's provider is not listed.
      const primary = await t.http('GET', '/api/v1/providers?per_page=100', { token: alice.token })
      expect(primary.body.data.map((p: { uuid: string }) => p.uuid)).not.toContain(mine.uuid)
    })

    it('paginates and sorts (default by name)', async () => {
      const first = await t.http('GET', '/api/v1/providers?per_page=2', { token: bob.token })
      expect(first.status).toBe(200)
      expect(first.body.data).toHaveLength(2)
      expect(first.body.meta).toMatchObject({ current_page: 1, per_page: 2, from: 1, to: 2 })
      const all = await t.http('GET', '/api/v1/providers?per_page=100', { token: bob.token })
      const names = all.body.data.map((p: { name: string }) => p.name.toLowerCase())
      expect(names).toEqual([...names].sort())
      expect(first.body.meta.total).toBe(all.body.data.length)
      const desc = await t.http('GET', '/api/v1/providers?per_page=100&sort=-name', { token: bob.token })
      expect(desc.body.data.map((p: { name: string }) => p.name.toLowerCase())).toEqual([...names].reverse())
    })

    it.each([
      ['an unknown type', 'type=vector', 'type'],
      ['an unknown sort', 'sort=secret', 'sort'],
      ['per_page over 100', 'per_page=101', 'per_page'],
      ['an unknown parameter', 'owner=1', ''],
    ])('answers 400 for %s', async (_label, query, path) => {
      const res = await t.http('GET', `/api/v1/providers?${query}`, { token: alice.token })
      expect(res.status).toBe(400)
      if (path) expectInvalid(res, path)
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/providers'), 401, 'UNAUTHORIZED')
    })
  })

  describe('providers.create (POST /api/v1/providers)', () => {
    it('answers 201 with the exact shape; the caller owns it, in the workspace context', async () => {
      const res = await t.http('POST', '/api/v1/providers', {
        token: alice.token,
        headers: inTeam(),
        body: {
          name: 'Acme LLM Gateway',
          slug: 'acme-gateway',
          description: 'Our vLLM cluster',
          type: 'llm',
          driver: 'openai-compatible',
          base_url: 'https://llm.acme.test/v1',
          auth_scheme: 'header',
          auth_parameter: 'X-Api-Key',
          visibility: 'private',
          metadata: { region: 'eu-west', tier: 'gold' },
        },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      expect(Object.keys(res.body.data).sort()).toEqual(PROVIDER_KEYS)
      expect(res.body.data).toMatchObject({
        slug: 'acme-gateway',
        name: 'Acme LLM Gateway',
        description: 'Our vLLM cluster',
        type: 'llm',
        driver: 'openai-compatible',
        base_url: 'https://llm.acme.test/v1',
        auth_scheme: 'header',
        auth_parameter: 'X-Api-Key',
        is_builtin: false,
        visibility: 'private',
        is_owner: true,
        metadata: { region: 'eu-west', tier: 'gold' },
      })
      const [stored] = await t.sql(
        `select p.user_id, w.uuid from providers p join workspaces w on w.id = p.workspace_id where p.uuid = ?`,
        [res.body.data.uuid],
      )
      expect(stored).toEqual({ user_id: alice.id, uuid: team.uuid })
      const again = await t.http('GET', `/api/v1/providers/${res.body.data.uuid}`, { token: alice.token, headers: inTeam() })
      expect(again.body.data).toEqual(res.body.data)
    })

    it('defaults: slug from the name, driver by type, bearer, workspace visibility, empty description and metadata', async () => {
      const tool = await t.as(alice).providers.create({ name: 'Crème Tools!', type: 'tool', base_url: 'http://tools.local:8080' })
      expect(tool.data).toMatchObject({
        slug: 'creme-tools',
        driver: 'http',
        auth_scheme: 'bearer',
        auth_parameter: null,
        visibility: 'workspace',
        description: '',
        metadata: {},
      })
      const llm = await t.as(alice).providers.create({ name: 'Crème tools', type: 'llm', base_url: 'https://x.test' })
      expect(llm.data.driver).toBe('openai-compatible')
      expect(llm.data.slug).toMatch(/^creme-tools-[0-9a-f]{6}$/)
      const named = await t.as(alice).providers.create({ name: 'OpenAI', type: 'llm', base_url: 'https://proxy.test' })
      expect(named.data.slug).toMatch(/^openai-[0-9a-f]{6}$/)
      const symbols = await t.as(alice).providers.create({ name: '!!!', type: 'tool', base_url: 'https://x.test' })
      expect(symbols.data.slug).toBe('provider')
    })

    it('answers 400 naming slug when it is taken in the workspace or by a built-in; other workspaces may reuse it', async () => {
      await t.as(bob).providers.create({ name: 'Mine', slug: 'bobs-slug', type: 'tool', base_url: 'https://x.test' })
      expectInvalid(await t.http('POST', '/api/v1/providers', { token: bob.token, body: body({ slug: 'bobs-slug' }) }), 'slug')
      expectInvalid(await t.http('POST', '/api/v1/providers', { token: bob.token, body: body({ slug: 'anthropic' }) }), 'slug')
      const elsewhere = await t.http('POST', '/api/v1/providers', { token: alice.token, body: body({ slug: 'bobs-slug' }) })
      expect(elsewhere.status).toBe(201)
    })

    it.each([
      ['a missing name', { name: undefined }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a missing type', { type: undefined }, 'type'],
      ['an unknown type', { type: 'vector' }, 'type'],
      ['an unknown driver', { driver: 'gemini' }, 'driver'],
      ['the built-in-only driver local', { type: 'llm', driver: 'local' }, 'driver'],
      ['an llm driver on a tool provider', { type: 'tool', driver: 'openai' }, 'driver'],
      ['the http driver on an llm provider', { type: 'llm', driver: 'http' }, 'driver'],
      ['a missing base_url', { base_url: undefined }, 'base_url'],
      ['a null base_url', { base_url: null }, 'base_url'],
      ['an ftp base_url', { base_url: 'ftp://files.example.com' }, 'base_url'],
      ['a relative base_url', { base_url: '/v1' }, 'base_url'],
      ['a base_url over 2048 characters', { base_url: `https://x.test/${'a'.repeat(2040)}` }, 'base_url'],
      ['an unknown auth_scheme', { auth_scheme: 'oauth' }, 'auth_scheme'],
      ['the header scheme without auth_parameter', { auth_scheme: 'header' }, 'auth_parameter'],
      ['the query scheme with a null auth_parameter', { auth_scheme: 'query', auth_parameter: null }, 'auth_parameter'],
      ['the bearer scheme with an auth_parameter', { auth_scheme: 'bearer', auth_parameter: 'X-Key' }, 'auth_parameter'],
      ['an auth_parameter with spaces', { auth_scheme: 'header', auth_parameter: 'X Key' }, 'auth_parameter'],
      ['a bad slug', { slug: 'Not A Slug' }, 'slug'],
      ['a description over 2000 characters', { description: 'd'.repeat(2001) }, 'description'],
      ['an unknown visibility', { visibility: 'everyone' }, 'visibility'],
      ['a metadata value that is not a string', { metadata: { n: 1 } }, 'metadata.n'],
      ['a metadata key with a space', { metadata: { 'bad key': 'x' } }, 'metadata.bad key'],
      ['metadata that is not an object', { metadata: ['x'] }, 'metadata'],
      ['metadata over 64 KiB', { metadata: Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`k${i}`, 'x'.repeat(10_000)])) }, 'metadata'],
      ['a name with a NUL character', { name: 'a\u0000b' }, 'name'],
    ])('answers 400 naming the field for %s', async (_label, overrides, path) => {
      const res = await t.http('POST', '/api/v1/providers', { token: alice.token, body: body(overrides) })
      expectInvalid(res, path)
    })

    it('answers 400 for an unknown field (is_builtin cannot be set), creating nothing', async () => {
      const res = await t.http('POST', '/api/v1/providers', { token: alice.token, body: body({ name: 'Sneaky builtin', is_builtin: true }) })
      expect(res.status).toBe(400)
      expect(res.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['is_builtin'] })
      expect(await t.sql('select 1 from providers where name = ?', ['Sneaky builtin'])).toHaveLength(0)
    })

    it('answers 401 without a token and 403 for a read-only token, creating nothing', async () => {
      expectErrorBody(await t.http('POST', '/api/v1/providers', { body: body() }), 401, 'UNAUTHORIZED')
      const res = await t.http('POST', '/api/v1/providers', { token: reader, body: body({ name: 'Read only attempt' }) })
      expectErrorBody(res, 403, 'FORBIDDEN')
      expect(await t.sql('select 1 from providers where name = ?', ['Read only attempt'])).toHaveLength(0)
    })

    it('answers 404 for a workspace context the caller is not a member of', async () => {
      const res = await t.http('POST', '/api/v1/providers', { token: bob.token, headers: inTeam(), body: body() })
      expect(res.status).toBe(404)
    })
  })

  describe('providers.retrieve (GET /api/v1/providers/{provider_uuid})', () => {
    it('answers a built-in and a custom provider', async () => {
      const openai = await builtin('openai')
      const res = await t.http('GET', `/api/v1/providers/${openai.uuid}`, { token: bob.token })
      expect(res.status).toBe(200)
      expect(res.body.data).toEqual(openai)
      const mine = await teamProvider({ name: 'Retrievable' })
      const asMember = await t.http('GET', `/api/v1/providers/${mine.uuid}`, { token: carol.token, headers: inTeam() })
      expect(asMember.status).toBe(200)
      expect(asMember.body.data).toEqual({ ...mine, is_owner: false })
    })

    it("answers 404 for another tenant's provider, saying nothing of it, and 400 for a malformed uuid", async () => {
      const hidden = await teamProvider({ name: 'Hidden Team Provider', visibility: 'workspace' })
      expectHidden(await t.http('GET', `/api/v1/providers/${hidden.uuid}`, { token: bob.token }), hidden)
      expectHidden(await t.http('GET', `/api/v1/providers/${hidden.uuid}`, { token: bob.token, headers: { 'x-workspace-uuid': bob.workspaceUuid } }), hidden)
      expectInvalid(await t.http('GET', '/api/v1/providers/0123-abcd', { token: alice.token }), 'provider_uuid')
    })

    it("answers 404 for a member's private provider to another member, and the workspace admin sees it", async () => {
      const privateOne = (await t.as(carol, inTeam()).providers.create({ ...body(), name: 'Carol private', visibility: 'private' } as never)).data
      expectHidden(await t.http('GET', `/api/v1/providers/${privateOne.uuid}`, { token: bob.token }), privateOne)
      const asAdmin = await t.http('GET', `/api/v1/providers/${privateOne.uuid}`, { token: dave.token, headers: inTeam() })
      expect(asAdmin.status).toBe(200)
    })

    it('answers 401 without a token', async () => {
      const openai = await builtin('openai')
      expectErrorBody(await t.http('GET', `/api/v1/providers/${openai.uuid}`), 401, 'UNAUTHORIZED')
    })
  })

  describe('providers.update (PUT /api/v1/providers/{provider_uuid})', () => {
    it('keeps every key of concurrent updates of different metadata keys (the row is locked)', async () => {
      const mine = await teamProvider({ metadata: { keep: 'yes' } })
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`)
      // Callers, not HTTP: every update starts in the same tick, so their statements interleave.
      await Promise.all(keys.map((key) => t.as(alice, inTeam()).providers.update({ provider_uuid: mine.uuid, metadata: { [key]: key } })))
      expect((await row(mine.uuid)).metadata).toEqual({ keep: 'yes', ...Object.fromEntries(keys.map((key) => [key, key])) })
    })

    it('keeps omitted fields, clears with null, merges metadata, and answers the exact shape', async () => {
      const mine = await teamProvider({
        name: 'Before',
        description: 'old',
        auth_scheme: 'query',
        auth_parameter: 'api_key',
        metadata: { keep: 'yes', drop: 'me', change: 'a' },
      })
      const res = await t.http('PUT', `/api/v1/providers/${mine.uuid}`, {
        token: alice.token,
        headers: inTeam(),
        body: { name: 'After', description: null, metadata: { drop: null, change: 'b', added: 'c' } },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body.data).sort()).toEqual(PROVIDER_KEYS)
      expect(res.body.data).toMatchObject({
        uuid: mine.uuid,
        slug: mine.slug,
        name: 'After',
        description: '',
        type: 'tool',
        driver: 'http',
        base_url: mine.base_url,
        auth_scheme: 'query',
        auth_parameter: 'api_key',
        visibility: 'workspace',
        is_owner: true,
        metadata: { keep: 'yes', change: 'b', added: 'c' },
      })
      const switched = await t.as(alice, inTeam()).providers.update({ provider_uuid: mine.uuid, auth_scheme: 'basic', slug: 'renamed-slug' })
      expect(switched.data).toMatchObject({ auth_scheme: 'basic', auth_parameter: null, slug: 'renamed-slug' })
    })

    it.each([
      ['an llm driver on a tool provider', { driver: 'anthropic' }, 'driver'],
      ['the header scheme without auth_parameter', { auth_scheme: 'header' }, 'auth_parameter'],
      ['a null base_url', { base_url: null }, 'base_url'],
      ['a bad base_url', { base_url: 'mailto:a@b.c' }, 'base_url'],
      ['a metadata value that is a number', { metadata: { a: 2 } }, 'metadata.a'],
      ['an empty name', { name: '' }, 'name'],
    ])('answers 400 naming the field for %s and changes nothing', async (_label, patch, path) => {
      const mine = await teamProvider({ name: 'Validated' })
      const before = await row(mine.uuid)
      expectInvalid(await t.http('PUT', `/api/v1/providers/${mine.uuid}`, { token: alice.token, headers: inTeam(), body: patch }), path)
      expect(await row(mine.uuid)).toEqual(before)
    })

    it('answers 400 for type (fixed at creation) and a taken slug', async () => {
      const mine = await teamProvider({ name: 'Typed' })
      const other = await teamProvider({ name: 'Other' })
      const typed = await t.http('PUT', `/api/v1/providers/${mine.uuid}`, { token: alice.token, headers: inTeam(), body: { type: 'llm' } })
      expect(typed.status).toBe(400)
      expect(typed.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['type'] })
      expectInvalid(await t.http('PUT', `/api/v1/providers/${mine.uuid}`, { token: alice.token, headers: inTeam(), body: { slug: other.slug } }), 'slug')
      expectInvalid(await t.http('PUT', `/api/v1/providers/${mine.uuid}`, { token: alice.token, headers: inTeam(), body: { slug: 'ollama' } }), 'slug')
      const same = await t.http('PUT', `/api/v1/providers/${mine.uuid}`, { token: alice.token, headers: inTeam(), body: { slug: mine.slug } })
      expect(same.status).toBe(200)
    })

    it('answers 403 for a built-in provider, even to a workspace owner', async () => {
      const openai = await builtin('openai')
      const res = await t.http('PUT', `/api/v1/providers/${openai.uuid}`, { token: alice.token, body: { name: 'Hijacked' } })
      expectErrorBody(res, 403, 'FORBIDDEN', 'Built-in providers cannot be updated or deleted')
      expect((await row(openai.uuid)).name).toBe('OpenAI')
    })

    it("answers 403 to a member updating another member's workspace-visible provider (seeing grants read), and the admin may", async () => {
      const mine = await teamProvider({ name: 'Owned by Alice' })
      const res = await t.http('PUT', `/api/v1/providers/${mine.uuid}`, { token: carol.token, headers: inTeam(), body: { name: 'Carol was here' } })
      expectErrorBody(res, 403, 'FORBIDDEN', 'You may not change this provider')
      expect((await row(mine.uuid)).name).toBe('Owned by Alice')
      const byAdmin = await t.as(dave, inTeam()).providers.update({ provider_uuid: mine.uuid, name: 'Renamed by admin' })
      expect(byAdmin.data).toMatchObject({ name: 'Renamed by admin', is_owner: false })
    })

    it("answers 404 for another tenant's provider and leaves it unchanged", async () => {
      const hidden = await teamProvider({ name: 'Tenant Hidden' })
      const before = await row(hidden.uuid)
      expectHidden(await t.http('PUT', `/api/v1/providers/${hidden.uuid}`, { token: bob.token, body: { name: 'Stolen' } }), hidden)
      expect(await row(hidden.uuid)).toEqual(before)
    })

    it('answers 401 without a token and 403 for a read-only token, changing nothing', async () => {
      const mine = await teamProvider({ name: 'Read only target' })
      expectErrorBody(await t.http('PUT', `/api/v1/providers/${mine.uuid}`, { body: { name: 'x' } }), 401, 'UNAUTHORIZED')
      expectErrorBody(
        await t.http('PUT', `/api/v1/providers/${mine.uuid}`, { token: reader, headers: inTeam(), body: { name: 'x' } }),
        403,
        'FORBIDDEN',
      )
      expect((await row(mine.uuid)).name).toBe('Read only target')
    })

    it('answers 400 naming provider_uuid for a malformed uuid', async () => {
      expectInvalid(await t.http('PUT', '/api/v1/providers/0123-abcd', { token: alice.token, body: { name: 'x' } }), 'provider_uuid')
    })
  })

  describe('providers.delete (DELETE /api/v1/providers/{provider_uuid})', () => {
    it('soft-deletes (204): gone from retrieve and list, its accounts deleted and tools left without a provider', async () => {
      const mine = await teamProvider({ name: 'Doomed' })
      const account = await t.as(alice, inTeam()).accounts.create({ name: 'Doomed account', provider_uuid: mine.uuid, secret: 'sk-doomed-000000' })
      const tool = await t.as(alice, inTeam()).tools.create({ name: 'Doomed tool', url: 'https://x.test/a', provider_uuid: mine.uuid })
      const res = await t.http('DELETE', `/api/v1/providers/${mine.uuid}`, { token: alice.token, headers: inTeam() })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await row(mine.uuid)).deleted_at).not.toBeNull()
      expect((await t.http('GET', `/api/v1/providers/${mine.uuid}`, { token: alice.token, headers: inTeam() })).status).toBe(404)
      const list = await t.http('GET', '/api/v1/providers?per_page=100', { token: alice.token, headers: inTeam() })
      expect(list.body.data.map((p: { uuid: string }) => p.uuid)).not.toContain(mine.uuid)
      expect((await t.http('GET', `/api/v1/accounts/${account.data.uuid}`, { token: alice.token, headers: inTeam() })).status).toBe(404)
      const kept = await t.as(alice, inTeam()).tools.retrieve({ tool_uuid: tool.data.uuid })
      expect(kept.data.provider).toBeNull()
      // The slug is free again.
      const reused = await teamProvider({ name: 'Doomed again', slug: mine.slug })
      expect(reused.slug).toBe(mine.slug)
    })

    it('answers 400 naming provider_uuid for a malformed uuid', async () => {
      expectInvalid(await t.http('DELETE', '/api/v1/providers/0123-abcd', { token: alice.token }), 'provider_uuid')
    })

    it('answers 403 for a built-in provider', async () => {
      const ollama = await builtin('ollama')
      expectErrorBody(await t.http('DELETE', `/api/v1/providers/${ollama.uuid}`, { token: alice.token }), 403, 'FORBIDDEN')
      expect((await row(ollama.uuid)).deleted_at).toBeNull()
    })

    it("answers 403 to a member deleting another's provider; 404 to another tenant; 403 for a read-only token; 401 without one", async () => {
      const mine = await teamProvider({ name: 'Protected' })
      expectErrorBody(await t.http('DELETE', `/api/v1/providers/${mine.uuid}`, { token: carol.token, headers: inTeam() }), 403, 'FORBIDDEN')
      expectHidden(await t.http('DELETE', `/api/v1/providers/${mine.uuid}`, { token: bob.token }), mine)
      expectErrorBody(await t.http('DELETE', `/api/v1/providers/${mine.uuid}`, { token: reader, headers: inTeam() }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `/api/v1/providers/${mine.uuid}`), 401, 'UNAUTHORIZED')
      expect((await row(mine.uuid)).deleted_at).toBeNull()
      const error = await trpcError(t.as(carol, inTeam()).providers.delete({ provider_uuid: mine.uuid }))
      expect(error.code).toBe('FORBIDDEN')
      await t.as(dave, inTeam()).providers.delete({ provider_uuid: mine.uuid })
      expect((await row(mine.uuid)).deleted_at).not.toBeNull()
    })
  })
})
