/**
 * Tools (routers/tools.router.ts, src/catalog/tools.service.ts; docs/api/resources.md, "Tools"):
 * `api` tools with a method, a URL template, a JSON-schema input compiled by Ajv, a provider of
 * type `tool` and `credits`; PUT semantics and the tenancy and permissions of docs/api/tenancy.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp, TestUser } from './helpers/app.ts'
import { AGENT_TOOL_KEYS } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, ISO_Z, trpcError, UUID } from './helpers/expect.ts'
import { agentUsing, teamCast } from './helpers/resources.ts'

/** Keys of the Tool shape: those of an agent's tool without `pivot_account`. */
const TOOL_KEYS = AGENT_TOOL_KEYS.filter((key) => key !== 'pivot_account')

const SEARCH_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string', description: 'What to look for', example: 'weather' }, limit: { type: 'integer', minimum: 1 } },
  required: ['query'],
}

/** A 404 that says nothing of the hidden tool. */
const expectHidden = hiddenCheck('Tool')

/** An object nested `depth` levels deep. */
const nested = (depth: number): Record<string, unknown> => (depth <= 1 ? { leaf: 'x' } : { a: nested(depth - 1) })

describe('tools', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  let reader: string
  let team: { uuid: string }
  let inTeam: () => Record<string, string>
  let toolProvider: { uuid: string; slug: string; name: string }
  let photoKey: string

  beforeAll(async () => {
    ;({ t, alice, bob, carol, dave, reader, team, inTeam } = await teamCast('Tool Team'))
    toolProvider = (await t.as(alice, inTeam()).providers.create({ name: 'Search Co', type: 'tool', base_url: 'https://search.test' })).data
    photoKey = 'tools/search-icon.png'
    await t.sql(
      `insert into media (uuid, key, path, original_name, mime_type, size, user_id, workspace_id, created_at, updated_at)
       values (gen_random_uuid(), ?, 'x/y.png', 'icon.png', 'image/png', 10, ?, (select id from workspaces where uuid = ?), now(), now())`,
      [photoKey, alice.id, team.uuid],
    )
  })
  afterAll(async () => t?.close())

  const body = (overrides: Record<string, unknown> = {}) => ({ name: 'Web search', url: 'https://search.test/q?term={{query}}', ...overrides })
  const teamTool = async (overrides: Record<string, unknown> = {}, user: TestUser = alice) =>
    (await t.as(user, inTeam()).tools.create({ ...body(), ...overrides } as never)).data
  const row = async (uuid: string) =>
    (await t.sql('select name, description, url, method, input_schema, credits::text as credits, metadata, provider_id, profile_photo_key, profile_photo_config, visibility, deleted_at from tools where uuid = ?', [uuid]))[0]

  describe('tools.create (POST /api/v1/tools)', () => {
    it('answers 201 with the exact Tool shape, its provider embedded', async () => {
      const res = await t.http('POST', '/api/v1/tools', {
        token: alice.token,
        headers: inTeam(),
        body: {
          name: 'Web search',
          description: 'Searches the web',
          type: 'api',
          provider_uuid: toolProvider.uuid,
          method: 'POST',
          url: 'https://search.test/v1/{{ index }}/search?q={{query}}&limit={{limit}}',
          input_schema: SEARCH_SCHEMA,
          credits: 1.25,
          profile_photo_key: photoKey,
          profile_photo_config: { emoji: '🔎', background_color: '#ffeeaa', preference: 'image' },
          visibility: 'workspace',
          metadata: { category: 'search', retries: 3, headers: { accept: 'application/json' } },
        },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const tool = res.body.data
      expect(Object.keys(tool).sort()).toEqual(TOOL_KEYS)
      expect(tool.uuid).toMatch(UUID)
      expect(tool).toEqual({
        uuid: tool.uuid,
        name: 'Web search',
        description: 'Searches the web',
        type: 'api',
        profile_photo_url: `${t.config.appUrl}/api/v1/media/tools%2Fsearch-icon.png`,
        profile_photo_config: { emoji: '🔎', background_color: '#ffeeaa', preference: 'image' },
        visibility: 'workspace',
        credits: 1.25,
        is_owner: true,
        metadata: { category: 'search', retries: 3, headers: { accept: 'application/json' } },
        method: 'POST',
        url: 'https://search.test/v1/{{ index }}/search?q={{query}}&limit={{limit}}',
        input_schema: SEARCH_SCHEMA,
        allowed_tools: null,
        requires_approval: false,
        idempotent: false,
        provider: { uuid: toolProvider.uuid, slug: toolProvider.slug, name: 'Search Co' },
        created_at: tool.created_at,
        updated_at: tool.updated_at,
      })
      expect(tool.created_at).toMatch(ISO_Z)
      const again = await t.http('GET', `/api/v1/tools/${tool.uuid}`, { token: alice.token, headers: inTeam() })
      expect(again.body.data).toEqual(tool)
    })

    it('defaults: type api, GET, no provider, empty schema and metadata, 0 credits, private, no photo', async () => {
      const tool = await t.as(alice).tools.create({ name: 'Plain', url: 'http://localhost:8080/ping' })
      expect(tool.data).toMatchObject({
        type: 'api',
        method: 'GET',
        provider: null,
        input_schema: {},
        metadata: {},
        credits: 0,
        visibility: 'private',
        description: '',
        profile_photo_url: null,
        profile_photo_config: {},
      })
    })

    it('accepts JSON Schemas of draft-07 (with local $ref), 2019-09 and 2020-12, 16 levels deep, and the largest credits', async () => {
      const schemas = [
        { type: 'object', definitions: { q: { type: 'string' } }, properties: { q: { $ref: '#/definitions/q' } } },
        { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', $defs: { n: { type: 'number' } }, properties: { n: { $ref: '#/$defs/n' } } },
        { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { tags: { type: 'array', prefixItems: [{ type: 'string' }] } } },
        { $id: 'https://tools.test/schema.json', properties: { any: {} } },
        nested(16),
      ]
      for (const schema of schemas) {
        const res = await t.http('POST', '/api/v1/tools', { token: alice.token, body: body({ input_schema: schema, credits: 1_000_000 }) })
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        expect(res.body.data).toMatchObject({ input_schema: schema, credits: 1_000_000 })
      }
      // The same $id twice is fine: compiled schemas are not kept.
      const again = await t.http('POST', '/api/v1/tools', { token: alice.token, body: body({ input_schema: schemas[3] }) })
      expect(again.status).toBe(201)
    })

    it('stores idempotent (default false), changes it on update and keeps it when omitted; a non-boolean is a 400 naming it', async () => {
      const plain = await t.http('POST', '/api/v1/tools', { token: alice.token, body: body({ name: 'Plain tool' }) })
      expect(plain.body.data.idempotent).toBe(false)
      const safe = await t.http('POST', '/api/v1/tools', { token: alice.token, body: body({ name: 'Safe tool', idempotent: true }) })
      expect(safe.status, JSON.stringify(safe.body)).toBe(201)
      expect(safe.body.data.idempotent).toBe(true)
      const renamed = await t.http('PUT', `/api/v1/tools/${safe.body.data.uuid}`, { token: alice.token, body: { name: 'Still safe' } })
      expect(renamed.body.data).toMatchObject({ name: 'Still safe', idempotent: true })
      const unsafe = await t.http('PUT', `/api/v1/tools/${safe.body.data.uuid}`, { token: alice.token, body: { idempotent: false } })
      expect(unsafe.body.data.idempotent).toBe(false)
      const [stored] = await t.sql('select idempotent from tools where uuid = ?', [safe.body.data.uuid])
      expect(stored.idempotent).toBe(false)
      expectInvalid(await t.http('POST', '/api/v1/tools', { token: alice.token, body: body({ idempotent: 'yes' }) }), 'idempotent')
    })

    it('stores requires_approval (default false) for api and mcp tools and answers it in the Tool shape, the list and an agent\'s tools', async () => {
      const plain = await t.http('POST', '/api/v1/tools', { token: alice.token, headers: inTeam(), body: body({ name: 'Relaxed tool' }) })
      expect(plain.status, JSON.stringify(plain.body)).toBe(201)
      expect(plain.body.data.requires_approval).toBe(false)
      const careful = await t.http('POST', '/api/v1/tools', { token: alice.token, headers: inTeam(), body: body({ name: 'Careful tool', requires_approval: true }) })
      expect(careful.status, JSON.stringify(careful.body)).toBe(201)
      expect(careful.body.data.requires_approval).toBe(true)
      const server = await t.http('POST', '/api/v1/tools', {
        token: alice.token,
        headers: inTeam(),
        body: { name: 'Careful server', type: 'mcp', url: 'https://mcp.test/mcp', requires_approval: true },
      })
      expect(server.status, JSON.stringify(server.body)).toBe(201)
      expect(server.body.data).toMatchObject({ type: 'mcp', requires_approval: true })
      const stored = await t.sql('select uuid, requires_approval from tools where uuid in (?, ?, ?)', [plain.body.data.uuid, careful.body.data.uuid, server.body.data.uuid])
      expect(Object.fromEntries(stored.map((r) => [String(r.uuid), r.requires_approval]))).toEqual({
        [plain.body.data.uuid]: false,
        [careful.body.data.uuid]: true,
        [server.body.data.uuid]: true,
      })
      expect((await t.http('GET', `/api/v1/tools/${careful.body.data.uuid}`, { token: alice.token, headers: inTeam() })).body.data.requires_approval).toBe(true)
      const list = await t.http('GET', '/api/v1/tools?search=Careful&per_page=100', { token: alice.token, headers: inTeam() })
      expect(list.body.data.map((x: { name: string; requires_approval: boolean }) => [x.name, x.requires_approval]).sort()).toEqual([
        ['Careful server', true],
        ['Careful tool', true],
      ])
      const agentId = await agentUsing(t, { userId: alice.id, workspaceUuid: team.uuid, toolUuid: careful.body.data.uuid })
      const [{ uuid: agentUuid }] = await t.sql('select uuid from agents where id = ?', [agentId])
      const agent = await t.http('GET', `/api/v1/agents/${agentUuid}`, { token: alice.token, headers: inTeam() })
      expect(agent.status, JSON.stringify(agent.body)).toBe(200)
      expect(agent.body.data.tools).toEqual([expect.objectContaining({ uuid: careful.body.data.uuid, requires_approval: true })])
      const agents = await t.http('GET', '/api/v1/agents?with=tools&per_page=100', { token: alice.token, headers: inTeam() })
      const listed = agents.body.data.find((a: { uuid: string }) => a.uuid === agentUuid)
      expect(listed.tools).toEqual([expect.objectContaining({ uuid: careful.body.data.uuid, requires_approval: true })])
    })

    it.each([
      ['a missing name', { name: undefined }, 'name'],
      ['a blank name', { name: '  ' }, 'name'],
      ['a description over 2000 characters', { description: 'd'.repeat(2001) }, 'description'],
      ['an unknown type', { type: 'graphql' }, 'type'],
      ['allowed_tools on an api tool', { allowed_tools: ['search'] }, 'allowed_tools'],
      ['an unknown method', { method: 'TRACE' }, 'method'],
      ['a lower-case method', { method: 'get' }, 'method'],
      ['a missing url', { url: undefined }, 'url'],
      ['an ftp url', { url: 'ftp://files.test/a' }, 'url'],
      ['a relative url', { url: '/search?q={{query}}' }, 'url'],
      ['a placeholder in the host', { url: 'https://{{tenant}}.search.test/q' }, 'url'],
      ['a placeholder in the scheme', { url: '{{scheme}}://search.test/q' }, 'url'],
      ['a malformed placeholder', { url: 'https://search.test/{{1st}}' }, 'url'],
      ['an unclosed placeholder', { url: 'https://search.test/{{query' }, 'url'],
      ['a url over 2048 characters', { url: `https://search.test/${'a'.repeat(2040)}` }, 'url'],
      ['an input_schema that is an array', { input_schema: [{ type: 'string' }] }, 'input_schema'],
      ['an input_schema that is a string', { input_schema: '{"type":"object"}' }, 'input_schema'],
      ['an input_schema whose top-level type is not object', { input_schema: { type: 'string' } }, 'input_schema.type'],
      ['an input_schema with an unknown type', { input_schema: { type: 'object', properties: { a: { type: 'strin' } } } }, 'input_schema'],
      ['an input_schema with an unresolvable $ref', { input_schema: { type: 'object', properties: { a: { $ref: '#/definitions/nope' } } } }, 'input_schema'],
      ['an input_schema with a remote $ref', { input_schema: { properties: { a: { $ref: 'https://evil.test/schema.json' } } } }, 'input_schema'],
      ['an input_schema with a bad pattern', { input_schema: { properties: { a: { type: 'string', pattern: '(' } } } }, 'input_schema'],
      ['an input_schema of an unknown dialect', { input_schema: { $schema: 'https://example.test/my-dialect', type: 'object' } }, 'input_schema'],
      ['an input_schema with required not an array', { input_schema: { type: 'object', required: 'a' } }, 'input_schema'],
      ['an input_schema over 64 KiB', { input_schema: { description: 'x'.repeat(66_000) } }, 'input_schema'],
      ['an input_schema nested too deep', { input_schema: nested(17) }, 'input_schema'],
      ['an input_schema holding a NUL character', { input_schema: { properties: { a: { description: 'x\u0000y' } } } }, 'input_schema.properties.a.description'],
      ['credits as a string', { credits: '1' }, 'credits'],
      ['negative credits', { credits: -0.5 }, 'credits'],
      ['credits over 1,000,000', { credits: 1_000_000.5 }, 'credits'],
      ['credits with 5 decimals', { credits: 0.12345 }, 'credits'],
      ['credits as a boolean', { credits: true }, 'credits'],
      ['requires_approval as a string', { requires_approval: 'true' }, 'requires_approval'],
      ['an unknown profile_photo_key', { profile_photo_key: 'nobody/uploaded.png' }, 'profile_photo_key'],
      ['an empty profile_photo_key', { profile_photo_key: '' }, 'profile_photo_key'],
      ['an unknown profile_photo_config member', { profile_photo_config: { emoji: 'x', size: 3 } }, 'profile_photo_config'],
      ['an unknown profile_photo_config.preference', { profile_photo_config: { preference: 'video' } }, 'profile_photo_config.preference'],
      ['an unknown visibility', { visibility: 'team' }, 'visibility'],
      ['metadata that is an array', { metadata: ['a'] }, 'metadata'],
      ['metadata over 64 KiB', { metadata: { blob: 'x'.repeat(66_000) } }, 'metadata'],
      ['metadata holding a lone surrogate', { metadata: { list: ['ok', 'bad\uD800'] } }, 'metadata.list.1'],
      ['a malformed provider_uuid', { provider_uuid: 'search-co' }, 'provider_uuid'],
    ])('answers 400 naming the field for %s', async (_label, overrides, path) => {
      const res = await t.http('POST', '/api/v1/tools', { token: alice.token, headers: inTeam(), body: body({ name: 'Invalid tool', ...overrides }) })
      expectInvalid(res, path)
    })

    it('answers 400 naming provider_uuid for an llm provider, another tenant\'s provider and a deleted one, creating nothing', async () => {
      const openai = (await t.as(alice).providers.list({ search: 'openai', type: 'llm' })).data[0]
      const hidden = (await t.as(bob).providers.create({ name: 'Bob secret tools', type: 'tool', base_url: 'https://b.test' })).data
      const gone = (await t.as(alice, inTeam()).providers.create({ name: 'Gone tools', type: 'tool', base_url: 'https://g.test' })).data
      await t.as(alice, inTeam()).providers.delete({ provider_uuid: gone.uuid })
      const typed = await t.http('POST', '/api/v1/tools', { token: alice.token, headers: inTeam(), body: body({ name: 'Refused', provider_uuid: openai.uuid }) })
      expectInvalid(typed, 'provider_uuid')
      expect(typed.body.issues[0].message).toBe('The provider must be of type "tool"')
      for (const uuid of [hidden.uuid, gone.uuid]) {
        const res = await t.http('POST', '/api/v1/tools', { token: alice.token, headers: inTeam(), body: body({ name: 'Refused', provider_uuid: uuid }) })
        expectInvalid(res, 'provider_uuid')
        expect(JSON.stringify(res.body)).not.toContain(hidden.name)
      }
      expect(await t.sql('select 1 from tools where name = ?', ['Refused'])).toHaveLength(0)
    })

    it('answers 400 for an unknown field, 401 without a token, 403 for a read-only token; nothing is created', async () => {
      const unknown = await t.http('POST', '/api/v1/tools', { token: alice.token, body: body({ name: 'Unknown', user_id: bob.id }) })
      expect(unknown.status).toBe(400)
      expect(unknown.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['user_id'] })
      expectErrorBody(await t.http('POST', '/api/v1/tools', { body: body({ name: 'No token' }) }), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('POST', '/api/v1/tools', { token: reader, body: body({ name: 'Read only' }) }), 403, 'FORBIDDEN')
      expect(await t.sql(`select 1 from tools where name in ('Unknown', 'No token', 'Read only')`)).toHaveLength(0)
    })

    it('answers 404 for a workspace context the caller is not a member of, creating nothing', async () => {
      const res = await t.http('POST', '/api/v1/tools', { token: bob.token, headers: inTeam(), body: body({ name: 'Into the team' }) })
      expect(res.status).toBe(404)
      expect(await t.sql('select 1 from tools where name = ?', ['Into the team'])).toHaveLength(0)
    })
  })

  describe('tools.list (GET /api/v1/tools)', () => {
    it("lists the workspace's visible tools, filters by search, visibility and provider_uuid, paginates and sorts", async () => {
      const mine = await teamTool({ name: 'Weather lookup', description: 'Forecast by CITY', visibility: 'workspace', provider_uuid: toolProvider.uuid })
      const privateOne = await teamTool({ name: 'Alice private tool' })
      const carols = await teamTool({ name: 'Carol private tool' }, carol)
      const bobsPublic = (await t.as(bob).tools.create({ ...body(), name: 'Bob public tool', visibility: 'public' })).data
      const bobsPrivate = (await t.as(bob).tools.create({ ...body(), name: 'Bob private tool' })).data

      const res = await t.http('GET', '/api/v1/tools?per_page=100', { token: carol.token, headers: inTeam() })
      expect(res.status).toBe(200)
      const uuids = res.body.data.map((x: { uuid: string }) => x.uuid)
      expect(uuids).toEqual(expect.arrayContaining([mine.uuid, carols.uuid]))
      for (const hidden of [privateOne, bobsPublic, bobsPrivate]) expect(uuids).not.toContain(hidden.uuid)
      for (const tool of res.body.data) expect(Object.keys(tool).sort()).toEqual(TOOL_KEYS)

      const publicList = await t.http('GET', '/api/v1/tools?visibility=public&per_page=100', { token: carol.token, headers: inTeam() })
      expect(publicList.body.data.map((x: { uuid: string }) => x.uuid)).toContain(bobsPublic.uuid)
      expect(publicList.body.data.every((x: { visibility: string }) => x.visibility === 'public')).toBe(true)
      const search = await t.http('GET', '/api/v1/tools?search=city', { token: carol.token, headers: inTeam() })
      expect(search.body.data.map((x: { uuid: string }) => x.uuid)).toEqual([mine.uuid])
      const byProvider = await t.http('GET', `/api/v1/tools?provider_uuid=${toolProvider.uuid}&per_page=100`, { token: alice.token, headers: inTeam() })
      expect(byProvider.body.data.map((x: { uuid: string }) => x.uuid)).toContain(mine.uuid)
      expect(byProvider.body.data.every((x: { provider: { uuid: string } }) => x.provider?.uuid === toolProvider.uuid)).toBe(true)
      const private_ = await t.http('GET', '/api/v1/tools?visibility=private&per_page=100', { token: alice.token, headers: inTeam() })
      expect(private_.body.data.map((x: { uuid: string }) => x.uuid)).toContain(privateOne.uuid)
      expect(private_.body.data.every((x: { visibility: string }) => x.visibility === 'private')).toBe(true)

      const sorted = await t.http('GET', '/api/v1/tools?sort=name&per_page=100', { token: alice.token, headers: inTeam() })
      const names = sorted.body.data.map((x: { name: string }) => x.name.toLowerCase())
      expect(names).toEqual([...names].sort())
      const paged = await t.http('GET', '/api/v1/tools?sort=name&per_page=1&page=2', { token: alice.token, headers: inTeam() })
      expect(paged.body.data.map((x: { name: string }) => x.name.toLowerCase())).toEqual([names[1]])
      expect(paged.body.meta).toMatchObject({ total: names.length, current_page: 2, per_page: 1 })
    })

    it.each([
      ['an unknown visibility', 'visibility=team', 'visibility'],
      ['a malformed provider_uuid', 'provider_uuid=x', 'provider_uuid'],
      ['an unknown sort', 'sort=credits', 'sort'],
      ['page 0', 'page=0', 'page'],
    ])('answers 400 for %s', async (_label, query, path) => {
      expectInvalid(await t.http('GET', `/api/v1/tools?${query}`, { token: alice.token }), path)
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/tools'), 401, 'UNAUTHORIZED')
    })
  })

  describe('tools.retrieve (GET /api/v1/tools/{tool_uuid})', () => {
    it("answers another tenant's public tool (is_owner false), 404 for a private one, 401 without a token", async () => {
      const open = (await t.as(bob).tools.create({ ...body(), name: 'Bob open tool', visibility: 'public' })).data
      const res = await t.http('GET', `/api/v1/tools/${open.uuid}`, { token: alice.token })
      expect(res.status).toBe(200)
      expect(res.body.data).toEqual({ ...open, is_owner: false })
      const hidden = (await t.as(bob).tools.create({ ...body(), name: 'Bob hidden tool', visibility: 'workspace' })).data
      expectHidden(await t.http('GET', `/api/v1/tools/${hidden.uuid}`, { token: alice.token }), hidden)
      expectErrorBody(await t.http('GET', `/api/v1/tools/${open.uuid}`), 401, 'UNAUTHORIZED')
      expectInvalid(await t.http('GET', '/api/v1/tools/123', { token: alice.token }), 'tool_uuid')
    })
  })

  describe('tools.update (PUT /api/v1/tools/{tool_uuid})', () => {
    it('keeps every key of concurrent updates of different metadata keys (the row is locked)', async () => {
      const tool = await teamTool({ metadata: { keep: 1 } })
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`)
      // Callers, not HTTP: every update starts in the same tick, so their statements interleave.
      await Promise.all(keys.map((key) => t.as(alice, inTeam()).tools.update({ tool_uuid: tool.uuid, metadata: { [key]: key } })))
      expect((await row(tool.uuid)).metadata).toEqual({ keep: 1, ...Object.fromEntries(keys.map((key) => [key, key])) })
    })

    it('keeps omitted fields, clears with null, replaces input_schema, merges metadata', async () => {
      const tool = await teamTool({
        description: 'Before',
        provider_uuid: toolProvider.uuid,
        input_schema: SEARCH_SCHEMA,
        credits: 2,
        profile_photo_key: photoKey,
        profile_photo_config: { emoji: '🔎' },
        metadata: { keep: 1, drop: true, nested: { a: 1 } },
      })
      const schema = { type: 'object', properties: { city: { type: 'string' } } }
      const res = await t.http('PUT', `/api/v1/tools/${tool.uuid}`, {
        token: alice.token,
        headers: inTeam(),
        body: {
          name: 'Weather',
          description: null,
          provider_uuid: null,
          method: 'PATCH',
          input_schema: schema,
          profile_photo_config: null,
          metadata: { drop: null, nested: { b: 2 }, added: 'x' },
        },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body.data).sort()).toEqual(TOOL_KEYS)
      expect(res.body.data).toMatchObject({
        uuid: tool.uuid,
        name: 'Weather',
        description: '',
        provider: null,
        method: 'PATCH',
        url: tool.url,
        input_schema: schema,
        credits: 2,
        profile_photo_url: tool.profile_photo_url,
        profile_photo_config: {},
        visibility: 'private',
        metadata: { keep: 1, nested: { b: 2 }, added: 'x' },
      })
      const again = await t.as(alice, inTeam()).tools.update({ tool_uuid: tool.uuid, profile_photo_key: null, provider_uuid: toolProvider.uuid, credits: 0.0001 })
      expect(again.data).toMatchObject({ profile_photo_url: null, provider: { uuid: toolProvider.uuid }, credits: 0.0001, name: 'Weather' })
    })

    it('turns requires_approval on and off, and keeps it when omitted', async () => {
      const tool = await teamTool({ name: 'Toggled tool' })
      const update = async (patch: Record<string, unknown>) =>
        (await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: alice.token, headers: inTeam(), body: patch })).body.data.requires_approval
      expect(tool.requires_approval).toBe(false)
      expect(await update({ requires_approval: true })).toBe(true)
      expect(await update({ name: 'Still careful' })).toBe(true)
      expect((await t.as(alice, inTeam()).tools.update({ tool_uuid: tool.uuid, requires_approval: false })).data.requires_approval).toBe(false)
      expect(await t.sql('select requires_approval from tools where uuid = ?', [tool.uuid])).toEqual([{ requires_approval: false }])
    })

    it.each([
      ['a bad url', { url: 'https://{{host}}/x' }, 'url'],
      ['an input_schema that does not compile', { input_schema: { type: 'object', properties: { a: { minimum: 'one' } } } }, 'input_schema'],
      ['negative credits', { credits: -1 }, 'credits'],
      ['a null name', { name: null }, 'name'],
      ['a null url', { url: null }, 'url'],
      ['an unknown profile_photo_key', { profile_photo_key: 'missing.png' }, 'profile_photo_key'],
      ['metadata with a NUL key', { metadata: { 'a\u0000': 'x' } }, 'metadata'],
      ['requires_approval as a number', { requires_approval: 1 }, 'requires_approval'],
      ['requires_approval as null', { requires_approval: null }, 'requires_approval'],
    ])('answers 400 naming the field for %s and changes nothing', async (_label, patch, path) => {
      const tool = await teamTool({ metadata: { a: 1 } })
      const before = await row(tool.uuid)
      expectInvalid(await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: alice.token, headers: inTeam(), body: { name: 'Changed', ...patch } }), path)
      expect(await row(tool.uuid)).toEqual(before)
    })

    it('answers 400 when the merged metadata would pass 64 KiB, and changes nothing', async () => {
      const tool = await teamTool({ metadata: { a: 'x'.repeat(40_000) } })
      const before = await row(tool.uuid)
      expectInvalid(await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: alice.token, headers: inTeam(), body: { metadata: { b: 'y'.repeat(40_000) } } }), 'metadata')
      expect(await row(tool.uuid)).toEqual(before)
    })

    it("answers 403 to a workspace member updating another member's workspace-visible tool (seeing grants only read)", async () => {
      const tool = await teamTool({ name: 'Alice shared tool', visibility: 'workspace' })
      const before = await row(tool.uuid)
      const res = await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: carol.token, headers: inTeam(), body: { name: 'Carol edit' } })
      expectErrorBody(res, 403, 'FORBIDDEN', 'You may not change this tool')
      expect(await row(tool.uuid)).toEqual(before)
      expect((await trpcError(t.as(carol, inTeam()).tools.update({ tool_uuid: tool.uuid, name: 'x' }))).code).toBe('FORBIDDEN')
    })

    it('lets a workspace admin and a user with a write share update; a read share still gets 403', async () => {
      const tool = await teamTool({ name: 'Shared tool' })
      const byAdmin = await t.as(dave, inTeam()).tools.update({ tool_uuid: tool.uuid, name: 'Admin edit' })
      expect(byAdmin.data).toMatchObject({ name: 'Admin edit', is_owner: false })
      const [{ id }] = await t.sql('select id::float8 as id from tools where uuid = ?', [tool.uuid])
      await t.sql(
        `insert into shares (resource_type, resource_id, entity_type, entity_id, permission, created_at, updated_at)
         values ('tools', ?, 'user', ?, 'read', now(), now())`,
        [id, bob.id],
      )
      expectErrorBody(await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: bob.token, body: { name: 'Bob edit' } }), 403, 'FORBIDDEN')
      await t.sql(`update shares set permission = 'write' where resource_type = 'tools' and resource_id = ?`, [id])
      const byWriter = await t.http('PUT', `/api/v1/tools/${tool.uuid}`, { token: bob.token, body: { name: 'Bob edit' } })
      expect(byWriter.status).toBe(200)
      expect(byWriter.body.data.name).toBe('Bob edit')
      // write is not admin: the writer may not delete it.
      expectErrorBody(await t.http('DELETE', `/api/v1/tools/${tool.uuid}`, { token: bob.token }), 403, 'FORBIDDEN')
    })

    it("answers 404 for another tenant's tool and leaves it unchanged; 403 for another's public tool; 401; read-only 403", async () => {
      const hidden = await teamTool({ name: 'Tenant tool' })
      const before = await row(hidden.uuid)
      expectHidden(await t.http('PUT', `/api/v1/tools/${hidden.uuid}`, { token: bob.token, body: { name: 'Stolen' } }), hidden)
      expect(await row(hidden.uuid)).toEqual(before)
      const open = await teamTool({ name: 'Public tool', visibility: 'public' })
      expectErrorBody(await t.http('PUT', `/api/v1/tools/${open.uuid}`, { token: bob.token, body: { name: 'Defaced' } }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('PUT', `/api/v1/tools/${hidden.uuid}`, { body: { name: 'x' } }), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('PUT', `/api/v1/tools/${hidden.uuid}`, { token: reader, headers: inTeam(), body: { name: 'x' } }), 403, 'FORBIDDEN')
      expect(await row(hidden.uuid)).toEqual(before)
      expect((await row(open.uuid)).name).toBe('Public tool')
    })

    it('answers 400 naming tool_uuid for a malformed uuid', async () => {
      expectInvalid(await t.http('PUT', '/api/v1/tools/0123-abcd', { token: alice.token, body: { name: 'x' } }), 'tool_uuid')
    })
  })

  describe('tools.delete (DELETE /api/v1/tools/{tool_uuid})', () => {
    it("soft-deletes (204): gone from retrieve and list, removed from agents' tools", async () => {
      const tool = await teamTool({ name: 'Doomed tool', visibility: 'workspace' })
      const agentId = await agentUsing(t, { userId: alice.id, workspaceUuid: team.uuid, toolUuid: tool.uuid })
      const res = await t.http('DELETE', `/api/v1/tools/${tool.uuid}`, { token: alice.token, headers: inTeam() })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await row(tool.uuid)).deleted_at).not.toBeNull()
      expect((await t.http('GET', `/api/v1/tools/${tool.uuid}`, { token: alice.token, headers: inTeam() })).status).toBe(404)
      const list = await t.http('GET', '/api/v1/tools?per_page=100', { token: alice.token, headers: inTeam() })
      expect(list.body.data.map((x: { uuid: string }) => x.uuid)).not.toContain(tool.uuid)
      expect(await t.sql('select 1 from agent_tools where agent_id = ?', [agentId])).toHaveLength(0)
    })

    it("answers 403 to a member deleting another's tool, 404 to another tenant, 403 for a read-only token, 401 without one", async () => {
      const tool = await teamTool({ name: 'Kept tool', visibility: 'workspace' })
      expectErrorBody(await t.http('DELETE', `/api/v1/tools/${tool.uuid}`, { token: carol.token, headers: inTeam() }), 403, 'FORBIDDEN')
      expectHidden(await t.http('DELETE', `/api/v1/tools/${tool.uuid}`, { token: bob.token }), tool)
      expectErrorBody(await t.http('DELETE', `/api/v1/tools/${tool.uuid}`, { token: reader, headers: inTeam() }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `/api/v1/tools/${tool.uuid}`), 401, 'UNAUTHORIZED')
      expect((await row(tool.uuid)).deleted_at).toBeNull()
      await t.as(dave, inTeam()).tools.delete({ tool_uuid: tool.uuid })
      expect((await row(tool.uuid)).deleted_at).not.toBeNull()
    })

    it('answers 400 naming tool_uuid for a malformed uuid', async () => {
      expectInvalid(await t.http('DELETE', '/api/v1/tools/0123-abcd', { token: alice.token }), 'tool_uuid')
    })
  })
})
